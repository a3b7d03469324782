/**
 * Scaling and capacity, on a NATS server and a PostgreSQL cluster of the benchmark's own, every service in
 * its own process as in a cluster. First a read route of the config service with 1, 2 and 3 replicas
 * behind one gateway (queue-group sharing: on two cores the point is that it works and costs little, not
 * that throughput grows). Then, with one replica of each, a read route of every service and the login,
 * with the CPU time each process spent per request, from which the capacity plan in the README follows.
 * `READ_CACHE_MAX_AGE_MS=0` runs the gateway without its read cache (every read reaches its service).
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { startCluster, type Replica } from '@scada/testkit/faults/cluster';
import { adminToken } from '@scada/testkit/faults/load';
import { startNats, startPostgres } from '@scada/testkit/faults/servers';
import { load, type LoadResult } from './harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const password = 'scale-bench-admin-password';
const ticks = 100; // USER_HZ on Linux

/** CPU seconds a process has used so far (user + system), from /proc. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticks;
}

const nats = await startNats();
const postgres = await startPostgres();
const cluster = await startCluster({
  natsUrl: nats.url,
  databaseUrl: postgres.url,
  adminPassword: password,
  busTimeoutMs: 5000,
  shutdownGraceMs: 5000,
  counts: { auth: 1, config: 3, protocol: 1, gateway: 1 },
  startNow: ['auth-1', 'config-1', 'protocol-1', 'gateway-1'],
  env: {
    // The login case measures password checks, not the per-address limit that answers most of them 429.
    LOGIN_RATE_LIMIT_PER_MINUTE: '1000000',
    ...(process.env.READ_CACHE_MAX_AGE_MS === undefined ? {} : { READ_CACHE_MAX_AGE_MS: process.env.READ_CACHE_MAX_AGE_MS }),
  },
});
const byName = (name: string) => cluster.replicas.find((r) => r.name === name) as Replica;
try {
  const gateway = cluster.gateways[0];
  const url = `http://127.0.0.1:${gateway.port}`;
  const token = await adminToken(gateway.port, password);
  const headers = { authorization: `Bearer ${token}` };
  const created = await fetch(`${url}/api/projects`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'scale', isActive: true }),
  });
  const projectId = ((await created.json()) as { id: string }).id;
  const read = `${url}/api/projects/${projectId}`;

  // 1, 2 and 3 replicas of the config service.
  const scaling: LoadResult[] = [];
  for (const n of [1, 2, 3]) {
    if (n > 1) await cluster.start(byName(`config-${n}`));
    await load('warm-up', read, { seconds: 1, headers });
    scaling.push(await load(`${n} config replica${n > 1 ? 's' : ''}`, read, { seconds, headers }));
  }
  for (const n of [3, 2]) await cluster.signal(byName(`config-${n}`), 'SIGTERM');

  // One replica of each: throughput and CPU per request in the gateway and in the owning service.
  const routes: {
    name: string;
    owner: string;
    url: string;
    method?: 'GET' | 'POST';
    body?: string;
    headers: Record<string, string>;
    connections: number;
  }[] = [
    { name: 'GET /api/projects/{id} (config)', owner: 'config-1', url: read, headers, connections: 32 },
    { name: 'GET /api/users (auth)', owner: 'auth-1', url: `${url}/api/users`, headers, connections: 32 },
    { name: 'GET /api/connections (protocol)', owner: 'protocol-1', url: `${url}/api/connections`, headers, connections: 32 },
    {
      name: 'POST /login (auth, scrypt)',
      owner: 'auth-1',
      url: `${url}/login`,
      method: 'POST',
      body: JSON.stringify({ username: 'admin', password }),
      headers: { 'content-type': 'application/json' },
      connections: 4,
    },
  ];
  const capacity: string[] = [];
  for (const route of routes) {
    await load('warm-up', route.url, {
      seconds: 1,
      headers: route.headers,
      method: route.method,
      body: route.body,
      connections: route.connections,
    });
    const g0 = cpuSeconds(gateway.child?.pid);
    const s0 = cpuSeconds(byName(route.owner).child?.pid);
    const r = await load(route.name, route.url, {
      seconds,
      headers: route.headers,
      method: route.method,
      body: route.body,
      connections: route.connections,
    });
    const total = r.rps * seconds;
    const gMs = ((cpuSeconds(gateway.child?.pid) - g0) * 1000) / total;
    const sMs = ((cpuSeconds(byName(route.owner).child?.pid) - s0) * 1000) / total;
    capacity.push(
      `| ${route.name} | ${r.rps} | ${r.p99} | ${r.errors + r.non2xx} | ${gMs.toFixed(2)} | ${sMs.toFixed(2)} | ${Math.round(1000 / gMs)} | ${Math.round(1000 / sMs)} |`,
    );
  }

  console.log(
    [
      `### Config service replicas behind one gateway, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, ${seconds} s per case, read cache ${process.env.READ_CACHE_MAX_AGE_MS === '0' ? 'off' : 'on'}`,
      '',
      '| case | req/s | p50 ms | p99 ms | errors | ratio to 1 replica |',
      '|---|---:|---:|---:|---:|---:|',
      ...scaling.map(
        (r) => `| ${r.name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors + r.non2xx} | ${(r.rps / scaling[0].rps).toFixed(2)} |`,
      ),
      '',
      '### One replica of each service: throughput and CPU per request',
      '',
      '| route | req/s | p99 ms | errors | gateway CPU ms/req | service CPU ms/req | req/s per gateway core | req/s per service core |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...capacity,
    ].join('\n'),
  );
} finally {
  await cluster.stop();
  await postgres.remove();
  await nats.remove();
}
