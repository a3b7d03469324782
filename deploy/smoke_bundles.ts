/**
 * CI's smoke test of the built bundles (`dist/`, built first when missing or stale) on this machine's
 * Node, started as the images start them: each service and the gateway alone in its own process on a
 * NATS server and a PostgreSQL cluster of the test's own, answering real requests through the gateway;
 * then the all-in-one bundle on the embedded defaults, with HTTPS on a certificate it generates and the
 * API reference page's assets. Every process must stop on SIGTERM with exit code 0. Prints `ok: …` /
 * `FAILED: …` lines; exits non-zero on a failure.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster } from '@scada/testkit/faults/cluster';
import { adminToken } from '@scada/testkit/faults/load';
import { startNats, startPostgres } from '@scada/testkit/faults/servers';
import { freePort, waitReady } from '@scada/testkit/processes';
import { bundleCommand, ensureBuilt, repoRoot } from '../tools/build/build.ts';

const password = 'bundle-smoke-admin-password';
let failures = 0;
const report = (ok: boolean, what: string) => {
  console.log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
  if (!ok) failures++;
};

/** A request's status and body, or status 0 with the error when nothing answered. */
async function call(url: string, init: RequestInit = {}): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(url, init);
    return { status: res.status, body: await res.text() };
  } catch (err) {
    return { status: 0, body: String((err as Error).cause ?? err) };
  }
}

async function servicesAlone(): Promise<void> {
  const nats = await startNats();
  const postgres = await startPostgres();
  const cluster = await startCluster({
    natsUrl: nats.url,
    databaseUrl: postgres.url,
    adminPassword: password,
    busTimeoutMs: 5000,
    shutdownGraceMs: 2000,
    counts: { auth: 1, config: 1, protocol: 1, history: 1, gateway: 1 },
  }).catch((err: Error) => (report(false, `the bundles start one per process: ${err.message}`), null));
  try {
    if (!cluster) return;
    report(true, 'auth, config, protocol, history and gateway bundles each start alone on NATS + PostgreSQL and answer /readyz');
    const url = `http://127.0.0.1:${cluster.gateways[0].port}`;
    const headers = { authorization: `Bearer ${await adminToken(cluster.gateways[0].port, password)}`, 'content-type': 'application/json' };
    const created = await call(`${url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'smoke', isActive: true }) });
    const id = created.status === 200 ? (JSON.parse(created.body) as { id: string }).id : 'none';
    const reads = await Promise.all(
      [`/api/projects/${id}`, '/api/users', '/api/connections', '/readyz'].map((p) => call(`${url}${p}`, { headers })),
    );
    report(
      created.status === 200 && reads.every((r) => r.status === 200),
      `through the gateway: sign-in, a project stored and read, users, connections (${[created, ...reads].map((r) => r.status).join(' ')})`,
    );
    // The history bundle answers, and asks the protocol bundle whether the connection is one of the space.
    const history = await call(`${url}/api/connections/00000000-0000-4000-8000-000000000000/history/summary`, { headers });
    report(
      history.status === 404 && history.body.includes('not_found'),
      `the history bundle answers through the gateway (${history.status})`,
    );
    const codes = await Promise.all(cluster.replicas.map((r) => cluster.signal(r, 'SIGTERM')));
    report(
      codes.every((c) => c === 0),
      `every process stops on SIGTERM with exit code 0 (${codes.join(' ')})`,
    );
  } catch (err) {
    report(false, `the bundles one per process: ${(err as Error).message}`);
  } finally {
    await cluster?.stop();
    await nats.remove();
    await postgres.remove();
  }
}

async function allInOne(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-smoke-edge-'));
  const [http, https, health] = [await freePort(), await freePort(), await freePort()];
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    ADMIN_PASSWORD: password,
  };
  const child = spawn(process.execPath, bundleCommand('edge'), {
    cwd: repoRoot,
    env: { ...env, HTTP_PORT: String(http), HTTPS_PORT: String(https), HEALTH_PORT: String(health) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const url = `http://127.0.0.1:${http}`;
    const up = await waitReady(`${url}/readyz`, 60_000).then(
      () => true,
      () => false,
    );
    report(up, 'the all-in-one bundle starts on the embedded defaults and answers /readyz');
    if (!up) return;
    const login = await call(`${url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    const token = login.status === 200 ? (JSON.parse(login.body) as { access_token: string }).access_token : '';
    const projects = await call(`${url}/api/projects`, { headers: { authorization: `Bearer ${token}` } });
    report(
      login.status === 200 && projects.status === 200,
      `sign-in and a read through the all-in-one process (${login.status} ${projects.status})`,
    );
    const assets = await Promise.all(['/docs', '/docs/swagger-ui.css', '/openapi.json'].map((p) => call(`${url}${p}`)));
    report(
      assets.every((a) => a.status === 200),
      `the API reference page and its assets (${assets.map((a) => a.status).join(' ')})`,
    );
    const probe = await call(`http://127.0.0.1:${health}/readyz`);
    // The certificate is self-signed: the check is that the listener answers over TLS, not who signed it.
    const tls = await new Promise<boolean>((resolve) => {
      import('node:https').then(({ get }) =>
        get(`https://127.0.0.1:${https}/healthz`, { rejectUnauthorized: false }, (res) => resolve(res.statusCode === 200)).on('error', () =>
          resolve(false),
        ),
      );
    });
    report(
      probe.status === 200 && tls,
      `the probe port and HTTPS on a generated certificate answer (${probe.status}, ${tls ? 'TLS ok' : 'TLS failed'})`,
    );
  } finally {
    child.kill('SIGTERM');
    const code = await exited;
    report(code === 0, `the all-in-one process stops on SIGTERM with exit code 0 (${code})`);
    await rm(dataDir, { recursive: true, force: true });
  }
}

await ensureBuilt();
await servicesAlone();
await allInOne();
process.exit(failures === 0 ? 0 : 1);
