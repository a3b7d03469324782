/**
 * The footprint of what runs on an edge box, for `footprint.bench.ts`: the all-in-one bundle's first start
 * on a new `DATA_DIR` (time and CPU to `/healthz`, the peak resident memory until then, the resident memory
 * after it has sat idle) and an idle edge site: a NATS server with JetStream and the protocol bundle with
 * `SITE=` on its embedded store, run with the Node flags and environment of the site's unit
 * (`deploy/edge/scada-protocol-site.service`), measured together. Peaks are the kernel's high-water mark
 * (`VmHWM`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { roleBusKeys } from '@scada/testkit/bus_keys';
import { startNats } from '@scada/testkit/faults/servers';
import { bundleCommand, repoRoot } from '../tools/build/build.ts';
import { storeTemplateFile } from '@scada/platform';
import { freePort } from './harness.ts';

const distDir = join(repoRoot, 'dist');

/**
 * What the embedded store's work costs in CPU with `extra` in its environment (`footprint_store_work.ts`
 * in a process of its own, on the all-in-one bundle's template): CPU ms of each part.
 */
export async function storeWork(extra: Record<string, string>): Promise<{ ingestMs: number; readsMs: number; keyedMs: number }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join('bench', 'footprint_store_work.ts'), join(distDir, 'edge', storeTemplateFile)],
    {
      cwd: repoRoot,
      env: { ...process.env, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += String(d)));
  child.stderr.on('data', (d: Buffer) => (err = (err + String(d)).slice(-2000)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`footprint_store_work.ts exited ${code}: ${err}`);
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { ingestMs: number; readsMs: number; keyedMs: number };
}

/** One start measured: ms and CPU ms to ready, MiB at the peak until ready, MiB after idling. */
export type EdgeSample = { readyMs: number; cpuMs: number; peakMiB: number; idleMiB: number; idlePeakMiB: number };

/** A field of /proc/<pid>/status in MiB (`VmRSS` now, `VmHWM` the peak so far). */
export function statusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    }).on('error', () => resolve(false));
  });
}

/** Runs `args` with exactly `env` until `/healthz` on `port` answers, idles `idleMs`, measures, stops it. */
async function startAndMeasure(args: string[], env: Record<string, string>, port: number, idleMs: number): Promise<EdgeSample> {
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + String(d)).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    while (!(await answers(`http://127.0.0.1:${port}/healthz`))) {
      if (child.exitCode !== null) throw new Error(`${args.at(-1)} exited ${child.exitCode}: ${stderr}`);
      if (performance.now() - started > 120_000) throw new Error(`${args.at(-1)} not up in 120 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    const readyMs = performance.now() - started;
    const pid = child.pid!;
    const [cpu, peakMiB] = [cpuMs(pid), statusMiB(pid, 'VmHWM')];
    await new Promise((r) => setTimeout(r, idleMs));
    if (child.exitCode !== null) throw new Error(`${args.at(-1)} exited ${child.exitCode} while idle: ${stderr}`);
    return { readyMs, cpuMs: cpu, peakMiB, idleMiB: statusMiB(pid, 'VmRSS'), idlePeakMiB: statusMiB(pid, 'VmHWM') };
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  }
}

/**
 * The all-in-one bundle on its embedded defaults and `extra`, started on a new data folder (a first start),
 * with `flags` given to its node after the image's own (the one it runs with where both set the same).
 */
export async function edgeFirstStart(extra: Record<string, string>, idleMs: number, flags: string[] = []): Promise<EdgeSample> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-footprint-first-'));
  try {
    const port = await freePort();
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      NODE_ENV: 'production',
      ADMIN_PASSWORD: 'footprint-bench-admin-password',
      HTTP_PORT: String(port),
      HTTPS_PORT: String(await freePort()),
      DATA_DIR: dataDir,
      ...extra,
    };
    const command = bundleCommand('edge');
    return await startAndMeasure([...command.slice(0, -1), ...flags, command.at(-1)!], env, port, idleMs);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** The process id of the NATS server listening on `port` (found by its command line). */
function natsPid(port: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith('nats-server') && args[args.indexOf('-p') + 1] === String(port)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no nats-server on port ${port}`);
}

/** The site's systemd unit, whose command line and environment the bench runs the site's service with. */
const siteUnit = join(repoRoot, 'deploy', 'edge', 'scada-protocol-site.service');

/**
 * How the site's unit runs the protocol bundle: the Node flags of its `ExecStart` and the variables of its
 * `Environment=` lines (the allocator's settings among them), so that the bench measures what an edge box
 * runs. Variables given per site (`EnvironmentFile`) and the data folder are the bench's own.
 */
export function siteUnitCommand(unitFile = siteUnit): { flags: string[]; env: Record<string, string> } {
  const lines = readFileSync(unitFile, 'utf8').split('\n');
  const exec = lines.find((l) => l.startsWith('ExecStart='));
  if (exec === undefined) throw new Error(`${unitFile}: no ExecStart`);
  const flags = exec
    .slice('ExecStart='.length)
    .trim()
    .split(/\s+/)
    .slice(1)
    .filter((w) => w.startsWith('-'));
  const env: Record<string, string> = {};
  for (const line of lines.filter((l) => l.startsWith('Environment='))) {
    for (const pair of line.slice('Environment='.length).trim().split(/\s+/)) {
      const at = pair.indexOf('=');
      if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
    }
  }
  return { flags, env };
}

/** An idle edge site on a new data folder: its NATS server's resident memory and the site service's sample. */
export async function edgeSite(extra: Record<string, string>, idleMs: number): Promise<{ service: EdgeSample; natsMiB: number }> {
  const nats = await startNats();
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-footprint-site-'));
  try {
    const port = await freePort();
    const unit = siteUnitCommand();
    const env = {
      ...unit.env,
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      NODE_ENV: 'production',
      SERVICES: 'protocol',
      SITE: 'substation-1',
      NATS_URL: nats.url,
      ...roleBusKeys({ site: ['protocol'] }).site,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      DATA_DIR: dataDir,
      HEALTH_PORT: String(port),
      ...extra,
    };
    const service = await startAndMeasure([...unit.flags, bundleCommand('protocol').at(-1)!], env, port, idleMs);
    return { service, natsMiB: statusMiB(natsPid(nats.port), 'VmRSS') };
  } finally {
    await nats.remove();
    await rm(dataDir, { recursive: true, force: true });
  }
}
