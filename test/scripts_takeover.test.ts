/**
 * Scheduled scripts across config replicas, on the store and bus the environment names: three replicas
 * (the platform's own and two more on the same store and bus) share a periodic script and it fires on one
 * of them at a time, once per due time; when its holder dies without giving its lease up, another takes
 * it over as the lease runs out and counts the runs missed meanwhile without making them up.
 */
import { randomUUID } from 'node:crypto';
import { readConfigServiceConfig, startScriptRuntime, type ScriptRuntime } from '@scada/config';
import { EnvReader } from '@scada/platform';
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { until } from '@scada/testkit/live';
import { signIn } from '@scada/testkit/session';
import { scriptsApi } from '@scada/testkit/scripts';

const p = await startTestPlatform();
t.teardown(() => p.stop());
const store = p.proc.store!;
// The two replicas here hold leases of 3 s (renewed every 600 ms), so that a takeover is waited for 3 s rather than the default 10.
const config = readConfigServiceConfig(new EnvReader({ SCRIPT_LEASE_SECONDS: '3' }));
const replicas = new Map<string, ScriptRuntime>();
for (let i = 0; i < 2; i++) {
  const instance = `replica-${i}-${randomUUID().slice(0, 8)}`;
  replicas.set(instance, startScriptRuntime({ store, bus: p.proc.bus, log: p.proc.log, instance, config }));
}
t.teardown(() => Promise.all([...replicas.values()].map((r) => r.stop())));

type Run = { startedAt: string; by: string; trigger: string };
type Runs = { missed: number; overlapped: number; runs: Run[] };

/** At most one run per period in any stretch of runs (give or take the one at each end): nothing made up in a burst. */
function burstFree(runs: Run[], period: number): boolean {
  const starts = runs.map((r) => Date.parse(r.startedAt)).sort((a, b) => a - b);
  return starts.every((s, i) => starts.slice(i).every((e, k) => k <= Math.floor((e - s) / period) + 1));
}

t.test(`a scheduled script fires on one replica at a time, and another takes it over (${p.mode})`, async (t) => {
  const editor = await signIn(p, { role: 'editor' });
  const s = await scriptsApi(p, editor);
  const runs = async (id: string) => (await (await s.api('GET', `/${id}/runs?limit=100`)).json()) as Runs;
  const period = 250;
  const id = await s.create('return ins.now()', { type: 'Periodic', period });

  // Scheduled in the store directly, so that one of the two replicas here (not the platform's own,
  // which the API would kick first) takes it: that one can then die without giving its lease up.
  let holder: string | undefined;
  for (let attempt = 0; attempt < 5 && !holder; attempt++) {
    await store.query('delete from config.script_schedules where script_id = $1', [id]);
    await store.query('insert into config.script_schedules (space, script_id) values ($1, $2)', ['default', id]);
    await Promise.all([...replicas.values()].map((r) => r.scheduler.kick()));
    const { rows } = await store.query<{ owner: string | null }>('select owner from config.script_schedules where script_id = $1', [id]);
    holder = replicas.has(rows[0]?.owner ?? '') ? (rows[0]!.owner as string) : undefined;
  }
  t.ok(holder, 'a replica holds the script');
  // Every replica that may take it over has its workers started (the platform's own by a run by hand), so
  // that what is measured is the takeover, not a worker's first load of QuickJS on a busy machine.
  await Promise.all([...replicas.values()].map((r) => r.pool.warm()));
  t.equal((await s.run(await s.create('return 1'))).body.outcome, 'ok', "the platform's own replica has run a script");

  const before = await until('a dozen runs', async () => {
    const r = await runs(id);
    return r.runs.length >= 12 && r;
  });
  const byHolder = new Set(before.runs.map((r) => r.by));
  t.same([...byHolder], [holder], 'every run on the replica holding it');
  t.ok(burstFree(before.runs, period), 'once per due time at most');
  // The holder dies: it fires no more and renews nothing, and its lease is left to run out.
  await replicas.get(holder!)!.scheduler.abandon();
  const died = Date.now();
  // The lease as the dead holder left it (a renewal it had sent before it died may have landed).
  const { rows: lease } = await store.query<{ expires_at: Date }>('select expires_at from config.script_schedules where script_id = $1', [
    id,
  ]);
  const expiresAt = new Date(lease[0]!.expires_at).getTime();
  t.ok(expiresAt - died <= config.leaseMs, "the dead holder's lease ends at most a lease time after it died");
  const after = await until(
    'a run on another replica',
    async () => {
      const r = await runs(id);
      // The first run elsewhere (the list is newest first); a run is listed once it has ended.
      const taken = r.runs.filter((x) => x.by !== holder).sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt))[0];
      return taken && { ...r, taken };
    },
    20_000,
  );
  // Another replica looks as the lease runs out (a timer set for it, not its next tick) and fires at the
  // next due time: a period later at most. The 5 s beyond are for a machine busy enough to hold the event
  // loop, the same room the check had when it was counted from the death with a 10 s lease.
  const takenAfter = Date.parse(after.taken.startedAt) - expiresAt;
  t.ok(takenAfter <= period + 5_000, `another replica took it over ${takenAfter} ms after the dead holder's lease ran out`);
  t.ok(Date.parse(after.taken.startedAt) >= expiresAt, 'and not before it ran out');
  t.ok(after.missed >= 1, `the runs due meanwhile are counted missed (${after.missed})`);
  const later = await until('runs after the takeover', async () => {
    const r = await runs(id);
    return r.runs.filter((x) => x.by !== holder).length >= 4 && r;
  });
  t.ok(
    burstFree(
      later.runs.filter((x) => x.by !== holder),
      period,
    ),
    'missed runs are not made up in a burst',
  );
  t.equal(new Set(later.runs.filter((x) => x.by !== holder).map((x) => x.by)).size, 1, 'and one replica holds it now');
  t.equal((await s.api('POST', `/${id}/unschedule`)).status, 204);
});
