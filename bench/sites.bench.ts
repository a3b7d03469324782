/**
 * An edge site's uplink cut for a minute (`npm run bench sites`; SITE_CUT_SECONDS, SITE_RATE): the hub and
 * the site each on a NATS server of their own, the leaf link through a relay that is cut, the simulator
 * reporting SITE_RATE counters a second through a buffered block, the site's protocol service killed with
 * SIGKILL and started again during the cut. Reports what arrived at the hub (exactly once, or not), how
 * fast the backlog crossed once the link returned, and how long the site's own server took to store each
 * event during the cut. The suite runs the same with a 10 s cut (`test/sites.test.ts`).
 */
import { cpus, totalmem } from 'node:os';
import { runSiteOutage } from '@scada/testkit/site_outage';

const cutMs = Number(process.env.SITE_CUT_SECONDS ?? 60) * 1000;
const rate = Number(process.env.SITE_RATE ?? 100);
const r = await runSiteOutage({ cutMs, rate, log: (line) => console.error(line) });
const dup = (xs: number[]) => xs.length - new Set(xs).size;
const missing = (xs: number[]) => r.reported - new Set(xs).size;
console.log(
  `### Edge site, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, ${r.mode}\n`,
);
console.log('| measure | value |');
console.log('|---|---:|');
console.log(`| uplink cut | ${cutMs / 1000} s, site service killed and restarted during it |`);
console.log(`| counters reported (${rate}/s) | ${r.reported} |`);
console.log(`| at the hub's live channel: missing / twice | ${missing(r.live)} / ${dup(r.live)} |`);
console.log(`| in the hub's history: missing / twice | ${missing(r.history)} / ${dup(r.history)} |`);
console.log(`| events kept at the site during the cut | ${r.storedDuringCut} |`);
console.log(`| caught up after the link returned | ${(r.catchUpMs / 1000).toFixed(1)} s |`);
console.log(`| backlog drain | ${r.drainPerSecond} events/s |`);
console.log(
  `| site publish → stored, during the cut: p50 / p99 / max | ${r.sitePublish.p50} / ${r.sitePublish.p99} / ${r.sitePublish.max} ms (${r.sitePublish.count} reports) |`,
);
console.log(
  `| control during the cut | ${r.control.status} ${r.control.code} in ${Math.round(r.control.ms)} ms, Retry-After ${r.control.retryAfter} |`,
);
console.log(`| site stream per event | ${r.bytesPerEvent} bytes |`);
const gaps = (xs: number[]) => {
  const have = new Set(xs);
  const out: string[] = [];
  for (let i = 1; i <= r.reported; i++) {
    if (have.has(i)) continue;
    let j = i;
    while (j + 1 <= r.reported && !have.has(j + 1)) j++;
    out.push(i === j ? `${i}` : `${i}–${j}`);
    i = j;
  }
  return out.join(', ') || 'none';
};
console.error(`missing at the live channel: ${gaps(r.live)}; in the history: ${gaps(r.history)}`);
console.log(
  `| a change made at the hub during the cut (site in step during it: ${r.inSyncDuringCut}), at the site after the link returned | ${(r.configSyncMs / 1000).toFixed(1)} s |`,
);
