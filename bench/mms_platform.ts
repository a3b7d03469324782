/**
 * The platform as the MMS benchmark drives it: launched in this process on the embedded defaults, an
 * administrator signed in, connections to a device made and awaited through the HTTP API; and the
 * download of a device file timed through the API, by the platform's MMS client alone, or by a command.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { DeviceFile, MmsClient } from '@scada/iec61850';
import { launch, type PlatformProcess } from '../launch.ts';

/** A platform launched for a benchmark. */
export type BenchPlatform = {
  url: string;
  proc: PlatformProcess;
  headers: Record<string, string>;
  /** Creates a connection to a device in the benchmark's project; answers its id. */
  create(name: string, host: string, port: number): Promise<string>;
  /** Starts a connection and waits until it is connected. */
  start(id: string, timeoutMs?: number): Promise<void>;
  /** Waits until a started connection is connected. */
  connected(id: string, timeoutMs?: number): Promise<void>;
  /** Stops a connection and waits until its association has ended. */
  disconnect(id: string): Promise<void>;
  stop(): Promise<void>;
};

/** Launches the whole platform in this process, signs in and makes a project. */
export async function startBenchPlatform(env: Record<string, string> = {}): Promise<BenchPlatform> {
  const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-mms-platform-'));
  const proc = await launch(
    { DATA_DIR: dataDir, HTTP_PORT: '1', HTTPS_PORT: '0', ADMIN_PASSWORD: 'bench-admin-password', LOG_LEVEL: 'warn', ...env },
    { log: pino({ level: 'warn' }), host: '127.0.0.1', ephemeralPorts: true },
  );
  const url = `http://127.0.0.1:${proc.gateway!.httpPort}`;
  const login = await fetch(`${url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'bench-admin-password' }),
  });
  const headers = {
    authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}`,
    'content-type': 'application/json',
  };
  const project = (await (
    await fetch(`${url}/api/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'bench', isActive: true }) })
  ).json()) as { id: string };
  const status = async (id: string) => (await (await fetch(`${url}/api/connections/${id}/status`, { headers })).json()) as string;
  const connected = async (id: string, timeoutMs = 60_000) => {
    const end = Date.now() + timeoutMs;
    while ((await status(id)) !== 'Connected') {
      if (Date.now() > end) throw new Error(`${id} did not connect`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    url,
    proc,
    headers,
    async create(name, host, port) {
      const form = new FormData();
      form.set('connection', JSON.stringify({ name, ip: host, port, projectId: project.id, protocol: 'IEC 61850' }));
      const res = await fetch(`${url}/api/protocols/iec61850/connections/with-file`, {
        method: 'POST',
        headers: { authorization: headers.authorization },
        body: form,
      });
      return ((await res.json()) as { id: string }).id;
    },
    async start(id, timeoutMs) {
      await fetch(`${url}/api/connections/${id}/start`, { method: 'POST', headers });
      await connected(id, timeoutMs);
    },
    connected,
    async disconnect(id) {
      await fetch(`${url}/api/connections/${id}/stop`, { method: 'POST', headers });
      while ((await (await fetch(`${url}/api/connections/${id}/session`, { headers })).json()).state !== 'stopped')
        await new Promise((r) => setTimeout(r, 20));
      // the association is concluded within moments of the stop
      await new Promise((r) => setTimeout(r, 1000));
    },
    async stop() {
      await proc.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A download timed: its octets and milliseconds. */
export type Timed = { bytes: number; ms: number };

/** MiB per second of a timed download. */
export const mibPerSecond = (t: Timed) => t.bytes / 1024 / 1024 / (t.ms / 1000);

/**
 * A device file downloaded through the platform's HTTP API, read to its end: by `fetch` in this process, or
 * with `curl` (`BENCH_HTTP_CLIENT=curl`) by a process of its own, as the baseline command is, its start included.
 */
export async function downloadThroughApi(p: BenchPlatform, connectionId: string, path: string): Promise<Timed> {
  if (process.env.BENCH_HTTP_CLIENT === 'curl') return downloadWithCurl(p, connectionId, path);
  const started = performance.now();
  const res = await fetch(`${p.url}/api/connections/${connectionId}/files/content?path=${encodeURIComponent(path)}`, {
    headers: { authorization: p.headers.authorization as string },
  });
  if (res.status !== 200) throw new Error(`the download answered ${res.status}: ${await res.text()}`);
  let bytes = 0;
  for await (const chunk of res.body!) bytes += (chunk as Uint8Array).length;
  return { bytes, ms: performance.now() - started };
}

async function downloadWithCurl(p: BenchPlatform, connectionId: string, path: string): Promise<Timed> {
  const url = `${p.url}/api/connections/${connectionId}/files/content?path=${encodeURIComponent(path)}`;
  const args = ['-s', '-f', '-o', '/dev/null', '-w', '%{size_download}', '-H', `authorization: ${p.headers.authorization}`, url];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile('curl', args, { timeout: 300_000 }, (error, stdout) => {
      if (error) return reject(new Error(`curl failed: ${error.message}`));
      resolve({ bytes: Number(stdout.trim()), ms: performance.now() - started });
    });
  });
}

/** The same file read by the platform's MMS client alone, on an association of its own (FileOpen, FileRead to the end, FileClose). */
export async function downloadByClient(host: string, port: number, path: string): Promise<Timed> {
  const client = await MmsClient.connect({ host, port });
  try {
    const started = performance.now();
    const file = await DeviceFile.open(client, path);
    let bytes = 0;
    for (let piece = await file.read(); ; piece = await file.read()) {
      bytes += piece.data.length;
      if (!piece.moreFollows) break;
    }
    await file.close();
    return { bytes, ms: performance.now() - started };
  } finally {
    await client.conclude();
  }
}

/**
 * A command that downloads the file (another client), timed from its start to its end, connect included.
 * With `out`, the file the command writes, which is removed before and must hold all `bytes` after: a
 * command may exit 0 without the file (libiec61850's `file-tool` does), and a failed download would
 * otherwise count as a fast one.
 */
export async function downloadByCommand(command: string, bytes: number, out?: string): Promise<Timed> {
  if (out) await rm(out, { force: true });
  const started = performance.now();
  const timed = await new Promise<Timed>((resolve, reject) => {
    execFile('sh', ['-c', command], { timeout: 300_000, maxBuffer: 64 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (error) return reject(new Error(`'${command}' failed: ${error.message} ${stderr}`));
      resolve({ bytes, ms: performance.now() - started });
    });
  });
  if (out) {
    const written = await stat(out).then(
      (s) => s.size,
      () => -1,
    );
    if (written !== bytes) throw new Error(`'${command}' left ${written < 0 ? 'no file' : `${written} of ${bytes} octets`} at ${out}`);
  }
  return timed;
}
