/**
 * The platform's log lines reach standard output whole and in order: a stopping process waits for
 * the logger (`flush`) before it exits, and then every line is written even when the pipe it writes to is
 * read slowly (the destination is then still writing a block when the process would exit).
 */
import { spawn } from 'node:child_process';
import t from 'tap';

const logModule = new URL('../src/log.ts', import.meta.url).href;

/** Runs a script that logs `count` numbered lines and flushes; its output is not read for `pauseMs`. */
function logThenExit(count: number, pauseMs: number): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const script = `
    const { createLogger } = await import(${JSON.stringify(logModule)});
    const log = await createLogger({ level: 'info', pretty: false });
    for (let i = 1; i <= ${count} - 3; i++) log.info({ i }, 'x'.repeat(100));
    // A moment for the destination to start writing, so that it is in the middle of a block at the end.
    await new Promise((done) => setTimeout(done, 50));
    for (let i = ${count} - 2; i <= ${count}; i++) log.info({ i }, 'x'.repeat(100));
    await new Promise((done) => log.flush(done));
    process.exit(0);`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), pauseMs);
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, lines: stdout.split('\n').filter((l) => l !== ''), stderr }));
  });
}

t.test('every line is written, whole and in order, to a pipe read slowly', async (t) => {
  const count = 30_000;
  const { code, lines, stderr } = await logThenExit(count, 1000);
  t.equal(code, 0, stderr);
  t.equal(lines.length, count);
  const ids = lines.map((line) => (JSON.parse(line) as { i: number }).i);
  t.ok(
    ids.every((id, at) => id === at + 1),
    'numbered 1 to the last, none missing or repeated',
  );
});

t.test('an output not read holds at most 16 MiB of lines: whole blocks past it are dropped, and a line says how many', async (t) => {
  const count = 200_000;
  // Some 34 MB of lines, none read until the process has written them all.
  const { code, lines, stderr } = await logThenExit(count, 3000);
  t.equal(code, 0, stderr);
  const parsed = lines.map((line) => JSON.parse(line) as { i?: number; dropped?: number; msg: string });
  const notice = parsed.find((l) => l.dropped !== undefined);
  t.ok(notice, 'a line says lines were dropped');
  t.match(notice?.msg, /log lines dropped/);
  const ids = parsed.flatMap((l) => (l.i === undefined ? [] : [l.i]));
  t.ok(ids.length < count, `fewer lines than written (${ids.length} of ${count})`);
  t.equal(ids.length + (notice?.dropped ?? 0), count, 'the lines written and the ones it counts as dropped make up all of them');
  t.ok(
    ids.every((id, at) => at === 0 || id > ids[at - 1]),
    'what is written is whole lines, in order',
  );
});
