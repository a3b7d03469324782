/**
 * Sites (contract: "Sites"): a protocol service at a substation on a NATS server of its own, a leaf node
 * of the hub's, the link through a relay the test cuts for 10 s. During the cut a control is refused at
 * once (503 `site_unreachable`, `Retry-After`) and the site's protocol service is killed with SIGKILL and
 * started again from what its own store kept; afterwards every counter the device reported is at the
 * hub's live channel and history exactly once, within 30 s of the link's return. The bench
 * (`npm run bench sites`) runs the same with a 60 s cut and reports the drain rate.
 */
import { execFileSync } from 'node:child_process';
import t from 'tap';
import { runSiteOutage } from '@scada/testkit/site_outage';

const hasNats = (() => {
  try {
    execFileSync('nats-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

t.test(
  'an uplink outage of 10 s with the site service killed during it',
  { skip: hasNats ? false : 'nats-server is not installed' },
  async (t) => {
    const r = await runSiteOutage({ cutMs: 10_000, rate: 100, log: (line) => t.comment(line) });
    t.comment(
      `${r.mode}: ${r.reported} reported, ${r.storedDuringCut} kept at the site during the cut, caught up ${r.catchUpMs} ms after the link returned`,
    );
    const once = (xs: number[]) => xs.filter((x, i) => xs.indexOf(x) !== i);
    const all = Array.from({ length: r.reported }, (_, i) => i + 1);
    t.same(once(r.live), [], 'no counter twice on the live channel');
    t.same(
      [...r.live].sort((a, b) => a - b),
      all,
      'and every counter there',
    );
    t.same(once(r.history), [], 'no counter twice in the history');
    t.same(
      [...r.history].sort((a, b) => a - b),
      all,
      'and every counter there',
    );
    t.ok(r.catchUpMs <= 30_000, `the backlog crossed within 30 s of the link's return (${r.catchUpMs} ms)`);
    t.equal(r.control.status, 503, 'a control during the cut: 503');
    t.equal(r.control.code, 'site_unreachable');
    t.ok(Number(r.control.retryAfter) > 0, 'with Retry-After');
    t.ok(r.control.ms < 1000, `at once (${Math.round(r.control.ms)} ms)`);
    const during = r.sitesDuringCut as { name: string; reachable: boolean }[];
    t.equal(during.find((s) => s.name === 'substation-1')?.reachable, false, 'GET /api/sites during the cut: unreachable');
    const after = r.sitesAfter as { name: string; reachable: boolean; backlog: number; lastSeen: string | null }[];
    const s1 = after.find((s) => s.name === 'substation-1');
    t.equal(s1?.reachable, true, 'and reachable after it');
    t.equal(s1?.backlog, 0, 'with nothing left to cross');
    t.ok(s1?.lastSeen, 'seen lately');
    t.equal(r.inSyncDuringCut, false, 'a change made at the hub during the cut: the site is out of step (inSync false)');
    t.ok(r.configSyncMs <= 5000, `and has it within 5 s of the link's return (${r.configSyncMs} ms)`);
  },
);
