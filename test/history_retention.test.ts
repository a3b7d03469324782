/**
 * The history's day partitions: made ahead of today and for any kept day a value arrives on, and dropped
 * once their day is past `HISTORY_RETENTION_DAYS`, with the rollups of that time; a value older than the
 * retention is not recorded at all. A second history replica started with a shorter retention does the
 * upkeep at its start, as a restarted service does.
 */
import t from 'tap';
import { historyService } from '@scada/history';
import { startService, type RunningService } from '@scada/platform';
import { startTestPlatform } from '@scada/testkit/platform';
import { signIn } from '@scada/testkit/session';
import { liveConnection, until } from '@scada/testkit/live';

const p = await startTestPlatform({ HISTORY_RETENTION_DAYS: '30' });
t.teardown(() => p.stop());
const encoder = new TextEncoder();
const dayMs = 86_400_000;
const viewer = await signIn(p, { role: 'viewer' });
const editor = await signIn(p, { role: 'editor' });
const ref = 'SIMLD0/MMXU1.TotW.mag.f[MX]';

function report(connectionId: string, at: number, value: number) {
  const receivedAt = new Date(at).toISOString();
  const values = [
    {
      connectionId,
      reference: ref,
      value,
      quality: null,
      timestamp: null,
      timestampSource: null,
      receivedAt,
      rcb: 'r',
      reason: null,
      seqNum: 1,
    },
  ];
  const body = { space: 'default', connectionId, rcb: 'r', rptId: 'r', seqNum: 1, entryId: null, values, at: receivedAt };
  p.proc.bus.publish('events.protocol.report', encoder.encode(JSON.stringify(body)));
}

const partitionDays = async () =>
  (
    await p.proc.store!.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class pa on pa.oid = i.inhparent
       join pg_namespace n on n.oid = pa.relnamespace where n.nspname = 'history' and pa.relname = 'points' order by 1`,
    )
  ).rows.map((r) => r.name);
const nameOf = (ms: number) => `points_${new Date(ms).toISOString().slice(0, 10).replaceAll('-', '')}`;

t.test(`partitions ahead, on demand, and dropped past the retention (${p.mode})`, async (t) => {
  const now = Date.now();
  const today = Math.floor(now / dayMs) * dayMs;
  const days = await partitionDays();
  for (let i = 0; i <= 3; i++) t.ok(days.includes(nameOf(today + i * dayMs)), `a partition for today + ${i}`);

  const c = await liveConnection(p, 1, { editor });
  const summary = async () =>
    (await (await fetch(`${p.url}/api/connections/${c.id}/history/summary`, { headers: viewer.headers })).json()) as {
      count: number;
      first: string;
    }[];
  report(c.id, now - 40 * dayMs, 1);
  report(c.id, now - 20 * dayMs, 2);
  report(c.id, now - 1000, 3);
  await until('the kept values recorded', async () => (await summary())[0]?.count === 2);
  t.ok((await partitionDays()).includes(nameOf(now - 20 * dayMs)), 'a partition made for a kept day a value came on');
  t.notOk((await partitionDays()).includes(nameOf(now - 40 * dayMs)), 'none for a value older than the retention: not recorded');
  const all = { reference: ref, from: new Date(now - 45 * dayMs).toISOString(), to: new Date(now).toISOString(), format: 'csv' };
  const csv = async () =>
    (await (await fetch(`${p.url}/api/connections/${c.id}/history?${new URLSearchParams(all)}`, { headers: viewer.headers })).text())
      .trim()
      .split('\r\n')
      .slice(1);
  t.same(
    (await csv()).map((l) => l.split(',')[3]),
    ['2', '3'],
  );

  const shorter: RunningService = await startService(historyService, {
    bus: p.proc.bus,
    store: p.proc.store!,
    log: p.proc.log,
    config: { ...(p.proc.config.services.history as object), retentionDays: 10 } as never,
  });
  t.teardown(() => shorter.stop());
  t.notOk((await partitionDays()).includes(nameOf(now - 20 * dayMs)), 'the day past the shorter retention is dropped');
  t.same(
    (await csv()).map((l) => l.split(',')[3]),
    ['3'],
    'its values with it',
  );
  t.same(
    (await summary()).map((s) => s.count),
    [1],
    'and its rollups',
  );
});
