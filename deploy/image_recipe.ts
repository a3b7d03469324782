/**
 * Performs deploy/Dockerfile for one TARGET without a Docker engine, as a builder would: each stage in a
 * folder of its own rooted at its WORKDIR, build arguments substituted, the same COPY lines (`COPY . .`
 * minus the Dockerfile's ignore file, `COPY --from=<stage>`), the same npm commands, and a stage whose
 * lines and inputs did not change taken from the previous run (the build stage serves every target).
 * RUN lines other than npm (apt-get for tini, the data folder) need the base image and are left to a real
 * build. A cached stage lives as long as the work folder, one check's run. Prints the image's folder and
 * command as JSON:
 *   tsx deploy/image_recipe.ts <target> <work folder>
 */
import { createHash } from 'node:crypto';
import { execSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dockerfile = join(root, 'deploy', 'Dockerfile');

/** One stage of the recipe: its name, working folder and instructions after FROM. */
export type Stage = { name: string; workdir: string; lines: string[] };

/** The instructions of the Dockerfile with continuation lines joined and comments dropped. */
function instructions(text: string): string[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** The recipe's stages for the given build arguments (defaults from the Dockerfile's ARG lines). */
export function readStages(text: string, args: Record<string, string>): Stage[] {
  const global: Record<string, string> = {};
  const stages: Stage[] = [];
  let current: (Stage & { args: Record<string, string> }) | null = null;
  const expand = (s: string, scope: Record<string, string>) => s.replace(/\$\{(\w+)\}|\$(\w+)/g, (all, a, b) => scope[a ?? b] ?? all);
  for (const line of instructions(text)) {
    const [word, ...rest] = line.split(/\s+/);
    const body = rest.join(' ');
    if (word === 'ARG') {
      const [name, fallback] = body.split('=');
      const value = args[name] ?? fallback ?? global[name];
      if (current) current.args[name] = value ?? '';
      else if (value !== undefined) global[name] = value;
    } else if (word === 'FROM') {
      const name = body.split(/\s+AS\s+/i)[1] ?? String(stages.length);
      current = { name, workdir: '/', lines: [], args: {} };
      stages.push(current);
    } else if (current && word === 'WORKDIR') {
      current.workdir = posix.resolve(current.workdir, expand(body, current.args));
    } else if (current) {
      current.lines.push(expand(line, current.args));
    }
  }
  return stages.map(({ name, workdir, lines }) => ({ name, workdir, lines }));
}

/** A `.dockerignore` pattern as a test on a context path (`a/b`): `*`, `?` and `**` as Docker reads them. */
function ignoreTest(pattern: string): (path: string) => boolean {
  const source = pattern
    .replace(/^\/+|\/+$/g, '')
    .split('/')
    .map((part) =>
      part === '**'
        ? '(?:.*)'
        : part
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '[^/]*')
            .replace(/\?/g, '[^/]'),
    )
    .join('/')
    .replace(/\(\?:\.\*\)\//g, '(?:.*/)?');
  const re = new RegExp(`^${source}$`);
  return (path) => re.test(path);
}

/** Copies the build context (the repository) into `dest`, leaving out what the ignore file names. */
function copyContext(dest: string, ignoreFile: string): void {
  const patterns = existsSync(ignoreFile)
    ? readFileSync(ignoreFile, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'))
        .map(ignoreTest)
    : [];
  const walk = (rel: string) => {
    for (const name of readdirSync(join(root, rel))) {
      const path = rel ? `${rel}/${name}` : name;
      if (patterns.some((ignored) => ignored(path))) continue;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else {
        mkdirSync(join(dest, rel), { recursive: true });
        cpSync(join(root, path), join(dest, path));
      }
    }
  };
  walk('');
}

/** COPY: a folder's contents into the destination; files into it when it is a folder (`./`, `.`, or several sources). */
function copy(sources: string[], dest: string): void {
  const intoFolder = sources.length > 1 || dest.endsWith('/') || dest.endsWith('/.') || existsSync(dest);
  for (const src of sources) {
    if (!existsSync(src)) throw new Error(`COPY: ${src} does not exist`);
    if (statSync(src).isDirectory()) {
      mkdirSync(dest, { recursive: true });
      cpSync(src, dest, { recursive: true });
    } else {
      const target = intoFolder ? join(dest, src.split('/').pop()!) : dest;
      mkdirSync(dirname(target), { recursive: true });
      cpSync(src, target);
    }
  }
}

/**
 * Performs every stage for `target` under `work` and returns the last stage's folder and command. A stage
 * is kept under a name derived from its lines and the stages it copies from, so an unchanged stage is
 * not performed twice.
 */
export function performImage(target: string, work: string): { dir: string; cmd: string[]; stages: string[] } {
  const text = readFileSync(dockerfile, 'utf8');
  const stages = readStages(text, { TARGET: target });
  const done = new Map<string, { dir: string; workdir: string; key: string }>();
  let cmd: string[] = [];
  for (const stage of stages) {
    const from = stage.lines.map((l) => /--from=(\S+)/.exec(l)?.[1]).filter((s): s is string => s !== undefined);
    const key = createHash('sha256')
      .update(JSON.stringify([stage.workdir, stage.lines, from.map((f) => done.get(f)?.key)]))
      .digest('hex')
      .slice(0, 16);
    const dir = join(work, `${stage.name}-${key}`);
    done.set(stage.name, { dir, workdir: stage.workdir, key });
    for (const line of stage.lines) if (line.startsWith('CMD ')) cmd = JSON.parse(line.slice(4)) as string[];
    if (existsSync(`${dir}.performed`)) continue;
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const line of stage.lines) performLine(line, dir, stage.workdir, done);
    writeFileSync(`${dir}.performed`, '');
  }
  const last = done.get(stages[stages.length - 1].name)!;
  return { dir: last.dir, cmd, stages: stages.map((s) => `${s.name} (${done.get(s.name)!.dir})`) };
}

/** One COPY or `RUN npm …` line in the stage's folder; other instructions need a real image and are skipped. */
function performLine(line: string, dir: string, workdir: string, done: Map<string, { dir: string; workdir: string }>): void {
  const words = line.split(/\s+/);
  const local = (path: string) => join(dir, posix.relative(workdir, posix.resolve(workdir, path)));
  if (words[0] === 'COPY') {
    const fromWord = words.find((w) => w.startsWith('--from='));
    const paths = words.slice(1).filter((w) => !w.startsWith('--'));
    const dest = paths.pop()!;
    const destPath = local(dest) + (dest.endsWith('/') ? '/' : '');
    if (!fromWord && paths.length === 1 && paths[0] === '.') {
      copyContext(local(dest), join(root, 'deploy', 'Dockerfile.dockerignore'));
      return;
    }
    const source = fromWord ? done.get(fromWord.slice('--from='.length)) : null;
    if (fromWord && !source) throw new Error(`${line}: no stage ${fromWord}`);
    const resolve = (p: string) => {
      if (!source) return join(root, p);
      const rel = posix.relative(source.workdir, p);
      if (rel.startsWith('..')) throw new Error(`${line}: ${p} is outside the stage's WORKDIR ${source.workdir}`);
      return join(source.dir, rel);
    };
    copy(paths.map(resolve), destPath);
  } else if (words[0] === 'RUN' && words[1] === 'npm') {
    // A build stage has no NODE_ENV (the image sets it only where it runs): `production` would drop the
    // build's development dependencies.
    const { NODE_ENV: _unset, ...env } = process.env;
    try {
      execSync(line.slice(4), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env });
    } catch (err) {
      const out = String((err as { stderr?: Buffer }).stderr ?? '')
        .split('\n')
        .slice(-20)
        .join('\n');
      throw new Error(`${line} failed:\n${out}`);
    }
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const [target, work] = process.argv.slice(2);
  if (!target || !work) {
    process.stderr.write('usage: tsx deploy/image_recipe.ts <target> <work folder>\n');
    process.exit(2);
  }
  console.log(JSON.stringify(performImage(target, work)));
}
