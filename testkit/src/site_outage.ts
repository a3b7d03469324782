/**
 * An uplink outage at a site, end to end, for the suite (a short cut) and the bench (a minute): the hub
 * platform (every service in this process) on the hub's NATS server, the site's protocol service in a
 * process of its own on the site's, the simulator reporting a counter through a buffered block
 * `rate` times a second. The link is cut; during the cut a control is sent (it must be refused at once)
 * and the site's protocol service is killed with SIGKILL and started again; then the link returns.
 * Answers what arrived at the hub's live channel and history, and how long each step took.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { startSimulator } from '@scada/simulator';
import { FIXTURE_SCL, fixtureCounter, fixtureModel } from './simulator_fixture.ts';
import { roleBusKeys } from './bus_keys.ts';
import { createDatabase, prepareDataFolder, secretsKeyOf, startTestPlatform } from './platform.ts';
import { liveConnection, until } from './live.ts';
import { startMain, type MainProcess } from './processes.ts';
import { isEvent, openSse, type SseEvent } from './sse.ts';
import { startSiteLink } from './sites.ts';

export type SiteOutageOptions = { site?: string; cutMs: number; rate: number; log?: (line: string) => void };

export type SiteOutageResult = {
  mode: string;
  /** Counters the device reported, 1 to `reported`. */
  reported: number;
  /** Counters as the hub's live channel delivered them, in order of arrival. */
  live: number[];
  /** Counters as the hub's history recorded them. */
  history: number[];
  /** The control sent during the cut: its status, problem code, Retry-After and how long it took. */
  control: { status: number; code: string | null; retryAfter: string | null; ms: number };
  /** `GET /api/sites` during the cut and at the end. */
  sitesDuringCut: unknown;
  sitesAfter: unknown;
  /** How long after the link returned every counter reported by then was at the hub (live channel and history). */
  catchUpMs: number;
  /** Events waiting in the site's stream when the link returned, and how fast they crossed. */
  backlogAtRestore: number;
  drainPerSecond: number;
  /** The site's stream: events taken while the link was down. */
  storedDuringCut: number;
  /** Report events published at the site during the cut: from the event's time to its storing in the site's stream (ms). */
  sitePublish: { count: number; p50: number; p99: number; max: number };
  /** Bytes the site's stream holds per event, for sizing SITE_STREAM_MAX_BYTES. */
  bytesPerEvent: number;
  /** A change made at the hub during the cut: whether the site was out of step then, and how long after the link returned it had it. */
  inSyncDuringCut: boolean | null;
  configSyncMs: number;
  /** Whether the hub saw the site reachable at the end of the cut (it must not). */
  reachableAtCutEnd: boolean | null;
  /** Permission violations the hub's and the site's NATS servers logged (the shipped permissions must leave none). */
  violations: string[];
};

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

const D = 'SIMLD0';
const BRCB = `${D}/LLN0$BR$brcb`;
const lease = { SESSION_LEASE_SECONDS: '2', MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '300', MMS_REQUEST_TIMEOUT_MS: '2000' };

export async function runSiteOutage(options: SiteOutageOptions): Promise<SiteOutageResult> {
  const site = options.site ?? 'substation-1';
  const say = options.log ?? (() => undefined);
  const cleanup: (() => Promise<unknown> | unknown)[] = [];
  try {
    const link = await startSiteLink(site);
    cleanup.push(() => link.stop());
    // A device whose buffered block keeps 20,000 entries (what a relay keeps is commonly thousands): the
    // site service's restart during the cut must not outlast the device's own buffer.
    const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults: { bufferEntries: 20_000 } });
    cleanup.push(() => sim.stop());
    // Keyed as a cluster is: the hub's process plays every role, the site's holds the protocol role's key
    // alone, so what the site asks of the hub is believed only for what that role may say.
    const keys = roleBusKeys({ hub: ['gateway', 'auth', 'config', 'protocol', 'history'], site: ['protocol'] });
    const p = await startTestPlatform({ ...lease, ...keys.hub, ...link.hubEnv('platform') }, { nats: link.hub.url });
    cleanup.push(() => p.stop());

    // The site's protocol service: its own store (a database of its own, or the embedded store in its folder).
    const siteDb = process.env.DATABASE_URL ? await createDatabase(process.env.DATABASE_URL) : null;
    if (siteDb) cleanup.push(() => siteDb.drop());
    const dataDir = await mkdtemp(join(tmpdir(), 'scada-site-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    // What is under test is the service's restart on what its store kept, not its first start: its
    // embedded store starts from the migrated template, as a site's bundle does from its own.
    if (!siteDb) await prepareDataFolder(dataDir);
    const siteEnv = {
      SERVICES: 'protocol',
      SITE: site,
      ...link.siteEnv(),
      ...keys.site,
      SECRETS_KEY: secretsKeyOf(p).toString('base64'),
      DATA_DIR: dataDir,
      HTTP_PORT: '0',
      HTTPS_PORT: '0',
      LOG_LEVEL: process.env.SITE_LOG_LEVEL ?? 'warn',
      ...lease,
      ...(siteDb ? { DATABASE_URL: siteDb.url } : {}),
    };
    let siteProc: MainProcess = startMain(siteEnv);
    cleanup.push(() => siteProc.child.kill('SIGKILL'));

    // What the site's stream holds, read on the site's own server.
    const siteNc = await connect({ servers: link.site.url, user: link.users.harness.user, pass: link.users.harness.pass });
    cleanup.push(() => siteNc.close());
    const siteJsm = await jetstreamManager(siteNc);
    const siteStream = async () => (await siteJsm.streams.info('EVENTS').catch(() => null))?.state ?? null;

    const c = await liveConnection(p, sim.port, { scl: FIXTURE_SCL, connection: { site } });
    const res = await c.api('POST', '/start');
    if (res.status !== 204) throw new Error(`start answered ${res.status}`);
    await until(
      'the site holds the connection (its session reaches the hub)',
      async () => (await c.session()).state === 'connected',
      60_000,
    );
    say('connected through the site');
    const enabled = await c.api('POST', '/reports', {
      rcb: BRCB,
      triggers: ['dchg'],
      optionalFields: ['sequence-number', 'entry-id', 'buffer-overflow'],
    });
    if (enabled.status !== 204) throw new Error(`enabling the block answered ${enabled.status}: ${await enabled.text()}`);

    const stream = await openSse(`${p.url}/api/live?connections=${c.id}&topics=values`, c.editor.headers);
    cleanup.push(() => stream.close());
    await stream.wait(isEvent('snapshot'));
    const counterOf = (v: { value?: { mag?: { f?: number } } }) => v.value?.mag?.f;
    const live = () =>
      stream.events.flatMap((e: SseEvent) => {
        if (!('event' in e) || e.event !== 'value') return [];
        const n = counterOf(e.data as never);
        return n === undefined ? [] : [n];
      });

    // The device: the next counter every 1/rate s.
    const counter = fixtureCounter(sim);
    const everyMs = 1000 / options.rate;
    const started = Date.now();
    const ticker = setInterval(
      () => {
        // Catch up on the ticks a busy moment delayed, so the rate holds on average.
        const due = Math.floor((Date.now() - started) / everyMs);
        while (counter.last < due) counter.next();
      },
      Math.max(5, everyMs),
    );
    cleanup.push(() => clearInterval(ticker));
    await until('values at the hub', async () => live().length >= options.rate, 30_000);
    say(`${live().length} values at the hub before the cut`);

    // The cut.
    const before = (await siteStream())?.last_seq ?? 0;
    link.relay.cut();
    const cutAt = Date.now();
    await new Promise((r) => setTimeout(r, 500));
    const t0 = performance.now();
    const control = await c.api('POST', '/control', { reference: `${D}/GGIO1.SPCSO1`, value: true });
    const controlMs = performance.now() - t0;
    const controlBody = (await control.json().catch(() => ({}))) as { code?: string };
    const sitesDuringCut = await (await fetch(`${p.url}/api/sites`, { headers: c.editor.headers })).json();
    // A change at the hub during the cut: the site has it once the link is back.
    const stored = (await (await c.api('GET', '')).json()) as Record<string, unknown>;
    const changed = await c.api('PUT', '', {
      name: stored.name,
      ip: stored.ip,
      port: stored.port,
      projectId: stored.projectId,
      protocol: 'IEC 61850',
      dsc: 'changed during the cut',
    });
    if (changed.status !== 204) throw new Error(`changing the connection answered ${changed.status}: ${await changed.text()}`);
    const sites = async () =>
      (await (await fetch(`${p.url}/api/sites`, { headers: c.editor.headers })).json()) as { name: string; inSync: boolean }[];
    const inSyncDuringCut = (await sites()).find((x) => x.name === site)?.inSync ?? null;

    // The site's protocol service dies and comes back while the link is down.
    await new Promise((r) => setTimeout(r, Math.min(2000, options.cutMs / 4)));
    siteProc.child.kill('SIGKILL');
    await siteProc.exited;
    const firstOutput = siteProc.output().stdout + siteProc.output().stderr;
    say('site protocol service killed');
    siteProc = startMain(siteEnv);
    const beforeRestart = (await siteStream())?.last_seq ?? 0;
    await until(
      'the restarted site service stores values again',
      async () => ((await siteStream())?.last_seq ?? 0) > beforeRestart + options.rate,
      60_000,
    ).catch(async (err: unknown) => {
      const state = await siteStream();
      if (siteDb) {
        const db = new pg.Client({ connectionString: siteDb.url });
        await db.connect();
        for (const table of ['report_subscriptions', 'report_positions', 'session_leases', 'session_states'])
          say(`${table}: ${JSON.stringify((await db.query(`select * from protocol.${table}`)).rows)}`);
        await db.end();
      }
      throw new Error(
        `${(err as Error).message} (site stream ${beforeRestart} → ${state?.last_seq}); the site service said: ${siteProc.output().stderr.slice(-3000)} ${siteProc.output().stdout.slice(-3000)}; before it was killed: ${firstOutput.slice(-4000)}`,
      );
    });
    say('site protocol service back, storing values');
    const rest = options.cutMs - (Date.now() - cutAt);
    if (rest > 0) await new Promise((r) => setTimeout(r, rest));
    const atCutEnd = await siteStream();
    const storedDuringCut = (atCutEnd?.last_seq ?? 0) - before;
    // Each report event of the cut: its time (the site's publish) against the time the site's server stored it.
    const latencies: number[] = [];
    for (let seq = before + 1; seq <= (atCutEnd?.last_seq ?? 0); seq++) {
      const m = await siteJsm.streams.getMessage('EVENTS', { seq }).catch(() => null);
      if (m === null || !m.subject.endsWith('protocol.report')) continue;
      const at = Date.parse((m.json() as { at: string }).at);
      latencies.push(Math.max(0, Number(m.timestamp ? Date.parse(m.timestamp) : Number.NaN) - at));
    }
    latencies.sort((a, b) => a - b);
    const bytesPerEvent = atCutEnd && atCutEnd.messages > 0 ? Math.round(atCutEnd.bytes / atCutEnd.messages) : 0;

    const reachableBeforeRestore = (await sites()).find((x) => x.name === site) as { reachable?: boolean } | undefined;
    // The link returns; the device goes on a little, then stops.
    const backlogAtRestore = ((await siteStream())?.last_seq ?? 0) - before;
    link.relay.restore();
    const restoredAt = Date.now();
    say('link restored');
    await until('the site has the change', async () => (await sites()).find((x) => x.name === site)?.inSync === true, 60_000).catch(() =>
      say(`the site did not take the change; it said: ${(siteProc.output().stdout + siteProc.output().stderr).slice(-3000)}`),
    );
    const configSyncMs = Date.now() - restoredAt;
    await new Promise((r) => setTimeout(r, 1000));
    clearInterval(ticker);
    const reported = counter.last;
    const historyOf = async () => {
      const from = new Date(started - 60_000).toISOString();
      const to = new Date(Date.now() + 60_000).toISOString();
      const ref = `${D}/GGIO1.AnIn1.mag.f[MX]`;
      const q = new URLSearchParams({ reference: ref, from, to, maxPoints: '10000' });
      const r = await fetch(`${p.url}/api/connections/${c.id}/history?${q}`, { headers: c.editor.headers });
      if (r.status !== 200) return [];
      const body = (await r.json()) as { resolution: string; points: { value: number }[] };
      return body.resolution === 'raw' ? body.points.map((pt) => pt.value) : [];
    };
    let history: number[] = [];
    let caughtUpAt = 0;
    await until(
      'every counter at the hub',
      async () => {
        if (new Set(live()).size < reported) return false;
        history = await historyOf();
        if (new Set(history).size < reported) return false;
        caughtUpAt = Date.now();
        return true;
      },
      120_000,
    ).catch(() => undefined);
    const catchUpMs = (caughtUpAt || Date.now()) - restoredAt;
    await new Promise((r) => setTimeout(r, 500));
    history = await historyOf();
    const sitesAfter = await (await fetch(`${p.url}/api/sites`, { headers: c.editor.headers })).json();
    return {
      mode: p.mode,
      reported,
      live: live(),
      history,
      control: { status: control.status, code: controlBody.code ?? null, retryAfter: control.headers.get('retry-after'), ms: controlMs },
      sitesDuringCut,
      sitesAfter,
      catchUpMs,
      backlogAtRestore,
      drainPerSecond: catchUpMs > 0 ? Math.round((backlogAtRestore * 1000) / catchUpMs) : 0,
      storedDuringCut,
      sitePublish: { count: latencies.length, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies.at(-1) ?? 0 },
      bytesPerEvent,
      inSyncDuringCut,
      configSyncMs,
      reachableAtCutEnd: reachableBeforeRestore?.reachable ?? null,
      violations: [...link.hub.violations(), ...link.site.violations()],
    };
  } finally {
    for (const step of cleanup.reverse()) await Promise.resolve(step()).catch(() => undefined);
  }
}
