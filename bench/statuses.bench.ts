/**
 * What an HMI polling the status of a project's connections pays: 100 connections asked one at a time
 * (`GET /api/connections/{id}/status`, the baseline) against all 100 in one request
 * (`GET /api/connections/status/by-ids`) and the project status (`GET /api/projects/{id}/status`, which
 * adds a hop to the config service). Reported as connection statuses per second, in the embedded mode.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { launch } from '../launch.ts';
import { load, type LoadResult } from './harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const password = 'bench-admin-password';
const count = 100;

const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-statuses-'));
const proc = await launch(
  { DATA_DIR: dataDir, HTTP_PORT: '1', HTTPS_PORT: '0', ADMIN_PASSWORD: password, LOG_LEVEL: 'warn' },
  { log: pino({ level: 'warn' }), host: '127.0.0.1', ephemeralPorts: true },
);
const url = `http://127.0.0.1:${proc.gateway!.httpPort}`;
try {
  const login = await fetch(`${url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  const { access_token: token } = (await login.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${token}`, 'x-space': 'default', 'content-type': 'application/json' };
  const project = (
    (await (
      await fetch(`${url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench', isActive: true }) })
    ).json()) as { id: string }
  ).id;
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const body = JSON.stringify({ name: `feeder-${i}`, ip: '127.0.0.1', port: 1, projectId: project, protocol: 'IEC 61850' });
    ids.push(((await (await fetch(`${url}/api/connections`, { method: 'POST', headers, body })).json()) as { id: string }).id);
  }
  const one = `${url}/api/connections/${ids[0]}/status`;
  const many = `${url}/api/connections/status/by-ids?connectionIds=${ids.join(',')}`;
  const status = `${url}/api/projects/${project}/status`;
  await load('warm-up', one, { seconds: 1, headers });
  await load('warm-up', many, { seconds: 1, headers });
  const rows: [LoadResult, number][] = [];
  // Alternating rounds, so that the machine's other work falls on both sides alike.
  for (let round = 0; round < 2; round++) {
    rows.push([await load(`one status per request (baseline), round ${round + 1}`, one, { seconds, headers }), 1]);
    rows.push([await load(`${count} statuses per request (by-ids), round ${round + 1}`, many, { seconds, headers }), count]);
    rows.push([await load(`project status (${count} connections), round ${round + 1}`, status, { seconds, headers }), count]);
  }
  const base = rows.filter(([, n]) => n === 1).reduce((sum, [r]) => sum + r.rps, 0) / 2;
  const lines = ['| case | req/s | p50 ms | p99 ms | errors | statuses/s | ratio to baseline |', '|---|---:|---:|---:|---:|---:|---:|'];
  for (const [r, n] of rows)
    lines.push(
      `| ${r.name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors + r.non2xx} | ${r.rps * n} | ${((r.rps * n) / base).toFixed(2)} |`,
    );
  console.log(`### Connection statuses, ${seconds} s per case, 32 connections, embedded\n\n${lines.join('\n')}`);
} finally {
  await proc.stop();
  await rm(dataDir, { recursive: true, force: true });
}
