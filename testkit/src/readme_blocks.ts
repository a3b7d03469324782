/**
 * Running a README's command block as written (`test/readme_commands.test.ts`): in a folder that links to
 * the repository, its lines in bash, a line that starts a long-running process in the background in a
 * process group of its own, which `stop()` ends.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './live.ts';
import { freePort } from './processes.ts';

/** A folder that links to every part of the repository, where a block's own files (keys, data) land. */
export async function workFolder(root: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'scada-readme-'));
  for (const entry of readdirSync(root))
    if (!['data', 'keys', 'dist', '.git'].includes(entry)) symlinkSync(join(root, entry), join(dir, entry));
  return dir;
}

/** Runs a block's lines in bash; a line that starts a long-running process goes to the background, its own process group. */
export function runBlock(
  dir: string,
  text: string,
  env: Record<string, string>,
): { done: Promise<number>; stop(): Promise<void>; output(): string; failed(): boolean } {
  const background = (line: string) => `${line.replace(/\s+#\s.*$/, '').replace(/\s*&\s*$/, '')} &\necho $! >> .pids`;
  const lines = text
    .split('\n')
    .map((line) => (/\b(npm start|npm run simulator|simulator\/src\/main\.ts)\b/.test(line) ? background(line) : line));
  const script = ['set -e', 'set -m', ...lines, 'wait'].join('\n');
  // The run's own platform settings stay out: the block says what it needs.
  const inherited = Object.entries(process.env).filter(
    ([k]) => !/^(NATS_|DATABASE_URL|BUS_|SECRETS_|SERVICES|HTTP_PORT|HTTPS_PORT|HEALTH_PORT|DATA_DIR|SCADA_|ADMIN_)/.test(k),
  );
  const child = spawn('bash', ['-c', script], {
    cwd: dir,
    env: { ...Object.fromEntries(inherited), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  // The shell's exit, not the close of its pipes: a process a block line started may outlive it holding them.
  const done = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  let exit: number | null = null;
  void done.then((code) => (exit = code));
  const started = () => (existsSync(join(dir, '.pids')) ? readFileSync(join(dir, '.pids'), 'utf8').split('\n').filter(Boolean) : []);
  return {
    done,
    output: () => output,
    // A line that failed, or a long-running process that ended: the block did not do what it says.
    failed: () => (exit !== null && exit !== 0) || started().some((pid) => spawnSync('kill', ['-0', pid]).status !== 0),
    async stop() {
      const pids = existsSync(join(dir, '.pids')) ? readFileSync(join(dir, '.pids'), 'utf8').split('\n').filter(Boolean) : [];
      const alive = () => pids.filter((pid) => spawnSync('kill', ['-0', '--', `-${pid}`]).status === 0);
      for (const pid of pids) spawnSync('kill', ['-TERM', '--', `-${pid}`]);
      // SIGTERM drains within the platform's grace; whatever is left after it is killed, never left running.
      await until("the block's processes stop", async () => alive().length === 0, 30_000).catch(() => {
        for (const pid of alive()) spawnSync('kill', ['-KILL', '--', `-${pid}`]);
      });
      if (exit === null) child.kill('SIGTERM');
      await done;
      // Whatever still holds the shell's output (a grandchild of a block's line) keeps this process no longer.
      child.stdout.destroy();
      child.stderr.destroy();
      child.unref();
    },
  };
}

/** A NATS server with JetStream of the caller's own, in `dir` (a block's `nats://127.0.0.1:4222` stands for one). */
export async function ownNats(dir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'nats')], { stdio: 'ignore' });
  await until('the NATS server listens', () => portOpen(port), 15_000);
  return {
    url: `nats://127.0.0.1:${port}`,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Whether something listens on a loopback port. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = tcpConnect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}
