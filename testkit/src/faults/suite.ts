/**
 * The fault suite: a cluster of two replicas of every service and two gateways under a steady mixed load,
 * put through one fault after another. Each phase reports the requests it saw, the ones that failed and
 * how, how long clients saw failures, and the slowest failure (a failure must come before the gateway's
 * timeout, never as a hang). At the end every create that was answered 2xx is looked up in PostgreSQL:
 * nothing acknowledged may be missing and nothing may be stored twice.
 */
import pg from 'pg';
import { startCluster, type Cluster, type Replica } from './cluster.ts';
import { adminToken, startLoad, type Load, type Sample } from './load.ts';
import { startNats, startPostgres, type ControlledServer } from './servers.ts';
import { recordedReports, startReportLoad, type ReportLoad } from './reports.ts';

export type PhaseResult = {
  name: string;
  /** Requests started during the phase. */
  requests: number;
  failed: number;
  /** Failures by status (`0 <what the client saw>` for no answer), e.g. `{ "503": 12, "0 ECONNRESET": 1 }`. */
  failures: Record<string, number>;
  /** Failures answered 503 without `Retry-After`. */
  without503RetryAfter: number;
  /** From the fault (or, for a server outage, from its return) to the end of the last failed request. */
  recoveryMs: number;
  /** The longest a failed request took. */
  slowestFailureMs: number;
  /** The longest any request of the phase took, answered or not. */
  slowestMs: number;
  /** Set for server outages: how long the server was away. */
  outageMs?: number;
  /**
   * Set for a service outage: what must not suffer from it. Requests to the other services that failed,
   * sign-ins made during the outage and those that failed, and readiness probes of the gateways that
   * did not answer 200.
   */
  unaffected?: { otherFailures: number; signIns: number; failedSignIns: number; probes: number; unreadyProbes: number };
};

export type SuiteResult = {
  phases: PhaseResult[];
  workers: number;
  busTimeoutMs: number;
  acknowledgedWrites: number;
  /** Acknowledged creates missing from the store. */
  lost: string[];
  /** Creates stored more than once. */
  duplicated: string[];
  /** Creates answered with a failure that were stored anyway (the client could not know). */
  unansweredButStored: number;
  unansweredWrites: number;
  /** The report load: reports JetStream acknowledged, and those the history is missing or holds twice. */
  reports: { sent: number; acknowledged: number; recorded: number; missing: number[]; doubled: number[] };
};

export type SuiteOptions = {
  /** Seconds of load in each phase. */
  phaseSeconds: number;
  /** Seconds NATS and PostgreSQL stay away. */
  outageSeconds: number;
  workers: number;
  busTimeoutMs: number;
  progress?: (line: string) => void;
};

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function summarise(name: string, samples: Sample[], from: number, to: number, recoveredFrom: number, outageMs?: number): PhaseResult {
  const seen = samples.filter((s) => s.start >= from && s.start < to);
  const failed = seen.filter((s) => s.status < 200 || s.status >= 300);
  const failures: Record<string, number> = {};
  // A request without an answer is counted under what the client saw (ECONNRESET, socket hang up, ...).
  for (const f of failed) {
    const key = f.status === 0 ? `0 ${f.error ?? 'unknown'}` : String(f.status);
    failures[key] = (failures[key] ?? 0) + 1;
  }
  const lastFailure = Math.max(recoveredFrom, ...failed.map((f) => f.end));
  return {
    name,
    requests: seen.length,
    failed: failed.length,
    failures,
    without503RetryAfter: failed.filter((f) => f.status === 503 && !(Number(f.retryAfter) > 0)).length,
    recoveryMs: lastFailure - recoveredFrom,
    slowestFailureMs: Math.max(0, ...failed.map((f) => f.end - f.start)),
    slowestMs: Math.max(0, ...seen.map((s) => s.end - s.start)),
    ...(outageMs === undefined ? {} : { outageMs }),
  };
}

/** Runs every phase in turn; the servers and processes it starts are gone when it returns. */
export async function runFaultSuite(options: SuiteOptions): Promise<SuiteResult> {
  const say = options.progress ?? (() => {});
  const adminPassword = 'fault-suite-admin-password';
  const servers: ControlledServer[] = [];
  let cluster: Cluster | null = null;
  let load: Load | null = null;
  let reportLoad: ReportLoad | null = null;
  try {
    const nats = await startNats();
    servers.push(nats);
    const postgres = await startPostgres();
    servers.push(postgres);
    say(`NATS on ${nats.port}, PostgreSQL on ${postgres.port}`);
    const c = await startCluster({
      natsUrl: nats.url,
      databaseUrl: postgres.url,
      adminPassword,
      busTimeoutMs: options.busTimeoutMs,
      shutdownGraceMs: 10_000,
    });
    cluster = c;
    say('cluster ready: two replicas of auth, config, protocol, history and two gateways');
    const token = await adminToken(c.gateways[0].port, adminPassword);
    const l = startLoad({ ports: c.gateways.map((g) => g.port), token, workers: options.workers, namePrefix: `fault-${Date.now()}` });
    load = l;
    // Reports beside the requests: every one the event stream took must reach the history once.
    const r = await startReportLoad(nats.url);
    reportLoad = r;
    const phases: PhaseResult[] = [];
    const phaseMs = options.phaseSeconds * 1000;
    const byName = (name: string) => c.replicas.find((r) => r.name === name) as Replica;

    const steady = async (name: string) => {
      const from = Date.now();
      await pause(phaseMs);
      phases.push(summarise(name, l.samples, from, Date.now(), from));
    };
    /** A replica killed or stopped, the load running on for a phase, then the replica started again. */
    const replicaFault = async (label: string, replica: Replica, sig: 'SIGKILL' | 'SIGTERM') => {
      const from = Date.now();
      const code = await c.signal(replica, sig);
      if (sig === 'SIGTERM' && code !== 0) throw new Error(`${replica.name} exited ${code} on SIGTERM`);
      await pause(phaseMs);
      await c.start(replica);
      await pause(500);
      phases.push(summarise(label, l.samples, from, Date.now(), from));
      say(`${label}: done`);
    };
    /** A server taken away for the outage, brought back, then a phase of load to see the service return. */
    const serverOutage = async (label: string, server: ControlledServer) => {
      const from = Date.now();
      await server.stop();
      await pause(options.outageSeconds * 1000);
      const back = Date.now();
      await server.start();
      // Until a whole second of requests has succeeded (at most 30 s), then a phase more of load.
      for (const end = Date.now() + 30_000; Date.now() < end; ) {
        await pause(250);
        const recent = l.samples.filter((s) => s.end > Date.now() - 1000);
        if (recent.length > 0 && recent.every((s) => s.status >= 200 && s.status < 300) && Date.now() - back > 1000) break;
      }
      await pause(phaseMs);
      phases.push(summarise(label, l.samples, from, Date.now(), back, back - from));
      say(`${label}: done`);
    };

    /**
     * Every replica of one service killed at once and kept away for a phase, while sign-ins run beside the
     * load and both gateways' readiness is probed: the gateways must stay ready, and only the requests
     * for the missing service may fail (503 with Retry-After).
     */
    const serviceOutage = async (service: 'protocol') => {
      const label = `every ${service} replica killed`;
      const from = Date.now();
      const down = c.replicas.filter((r) => r.service === service);
      await Promise.all(down.map((r) => c.signal(r, 'SIGKILL')));
      const seen = await alongside(c, adminPassword, phaseMs);
      await Promise.all(down.map((r) => c.start(r)));
      await pause(500);
      const to = Date.now();
      const phase = summarise(label, l.samples, from, to, from);
      const otherFailures = l.samples.filter(
        (s) => s.start >= from && s.start < to && s.kind !== `read-${service}` && (s.status < 200 || s.status >= 300),
      ).length;
      phases.push({ ...phase, unaffected: { otherFailures, ...seen } });
      say(`${label}: done`);
    };

    await steady('steady load, no fault');
    for (const service of ['auth', 'config', 'protocol', 'history'] as const)
      await replicaFault(`kill -9 ${service}-1`, byName(`${service}-1`), 'SIGKILL');
    await replicaFault('SIGTERM config-2', byName('config-2'), 'SIGTERM');
    await replicaFault('kill -9 gateway-2', byName('gateway-2'), 'SIGKILL');
    await replicaFault('SIGTERM gateway-1', byName('gateway-1'), 'SIGTERM');
    await serviceOutage('protocol');
    await serverOutage('NATS killed and restarted', nats);
    await serverOutage('PostgreSQL stopped (immediate) and restarted', postgres);
    await steady('steady load after the faults');
    await l.stop();
    const published = await r.stop();
    reportLoad = null;
    const history = await recordedReports(postgres.url, r.connectionId, published.acknowledged);

    const db = new pg.Client({ connectionString: postgres.url });
    await db.connect();
    const rows = (await db.query<{ name: string; n: number }>(`select name, count(*)::int as n from config.projects group by name`)).rows;
    await db.end();
    const stored = new Map(rows.map((r) => [r.name, r.n]));
    return {
      phases,
      workers: options.workers,
      busTimeoutMs: options.busTimeoutMs,
      acknowledgedWrites: l.acknowledged.size,
      lost: [...l.acknowledged].filter((n) => !stored.has(n)),
      duplicated: rows.filter((r) => r.n > 1).map((r) => r.name),
      unansweredButStored: [...l.unanswered].filter((n) => stored.has(n)).length,
      unansweredWrites: l.unanswered.size,
      reports: { sent: published.sent, acknowledged: published.acknowledged.size, ...history },
    };
  } finally {
    await reportLoad?.stop().catch(() => undefined);
    await load?.stop();
    await cluster?.stop();
    for (const s of servers.reverse()) await s.remove();
  }
}

/** Sign-ins one after another through the gateways in turn, and readiness probes of every gateway, for `ms`. */
async function alongside(
  c: Cluster,
  adminPassword: string,
  ms: number,
): Promise<{ signIns: number; failedSignIns: number; probes: number; unreadyProbes: number }> {
  const end = Date.now() + ms;
  const seen = { signIns: 0, failedSignIns: 0, probes: 0, unreadyProbes: 0 };
  const signIns = (async () => {
    for (let turn = 0; Date.now() < end; turn++) {
      const gateway = c.gateways[turn % c.gateways.length] as Replica;
      seen.signIns++;
      await adminToken(gateway.port, adminPassword).catch(() => seen.failedSignIns++);
    }
  })();
  const probes = (async () => {
    while (Date.now() < end) {
      for (const gateway of c.gateways) {
        seen.probes++;
        const status = await fetch(`http://127.0.0.1:${gateway.port}/readyz`).then(
          (r) => r.status,
          () => 0,
        );
        if (status !== 200) seen.unreadyProbes++;
      }
      await pause(200);
    }
  })();
  await Promise.all([signIns, probes]);
  return seen;
}

/** The results as a Markdown table. */
export function faultTable(result: SuiteResult): string {
  const lines = [
    `${result.workers} clients, gateway bus timeout ${result.busTimeoutMs} ms`,
    '',
    '| phase | requests | failed | failures by status | 503 without Retry-After | clients saw failures for (ms) | slowest failure (ms) |',
    '|---|---:|---:|---|---:|---:|---:|',
  ];
  for (const p of result.phases) {
    const by =
      Object.entries(p.failures)
        .map(([s, n]) => `${s.startsWith('0 ') ? `no answer (${s.slice(2)})` : s}: ${n}`)
        .join(', ') || '–';
    const outage =
      p.outageMs !== undefined
        ? ` (away ${p.outageMs} ms; counted from its return)`
        : p.unaffected
          ? ` (other services' requests failed: ${p.unaffected.otherFailures}; sign-ins ${p.unaffected.signIns}, failed ${p.unaffected.failedSignIns}; gateway probes ${p.unaffected.probes}, not ready ${p.unaffected.unreadyProbes})`
          : '';
    lines.push(
      `| ${p.name}${outage} | ${p.requests} | ${p.failed} | ${by} | ${p.without503RetryAfter} | ${p.recoveryMs} | ${p.slowestFailureMs} |`,
    );
  }
  lines.push(
    '',
    `Writes answered 2xx: ${result.acknowledgedWrites}; missing from the store: ${result.lost.length}; stored twice: ${result.duplicated.length}. ` +
      `Writes answered with a failure: ${result.unansweredWrites}, of which stored anyway: ${result.unansweredButStored}.`,
    `Reports published: ${result.reports.sent}, taken by the event stream: ${result.reports.acknowledged}; in the history: ${result.reports.recorded}, ` +
      `of those taken missing: ${result.reports.missing.length}, recorded twice: ${result.reports.doubled.length}.`,
  );
  return lines.join('\n');
}
