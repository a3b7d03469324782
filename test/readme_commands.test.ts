/**
 * Every ```sh block of the READMEs is what a reader types, so each one is run: here, or by a named test or
 * CI step, which this test holds to its word (the file exists and still does what the block says). A block
 * nobody accounts for fails the test, and so does an account of a block that is gone.
 *
 * The blocks run here run as written, in a folder of their own that links to the repository (so `keys/` and
 * `./data` land there), with three substitutions that keep them off what others on the machine use: their
 * NATS URL becomes a nats-server of the test's own, their database a database of the test's own, their
 * fixed ports free ones. A command that starts a long-running process (`npm start`, the simulator) is started
 * in the background, probed (`/readyz`, the listening port) and stopped with its whole process group.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { lexer, type Token, type Tokens } from 'marked';
import t from 'tap';
import { until } from '@scada/testkit/live';
import { createDatabase } from '@scada/testkit/databases';
import { freePort } from '@scada/testkit/processes';
import { wanderPace } from '@scada/simulator';
import { hasNatsServer } from '@scada/testkit/sites';
import { ownNats, portOpen, runBlock, workFolder } from '@scada/testkit/readme_blocks';

const root = new URL('..', import.meta.url).pathname;
t.setTimeout(600_000);

type Block = { file: string; first: string; text: string };

/** The ```sh blocks of a Markdown file, each named by its first line (its spaces collapsed). */
function shBlocks(file: string): Block[] {
  const out: Block[] = [];
  const walk = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token.type === 'code' && (token as Tokens.Code).lang === 'sh') {
        const text = (token as Tokens.Code).text;
        out.push({ file, first: text.split('\n')[0].trim().replace(/\s+/g, ' '), text });
      }
      const nested = (token as { tokens?: Token[]; items?: Token[] }).tokens ?? (token as { items?: Token[] }).items;
      if (nested) walk(nested);
    }
  };
  walk(lexer(readFileSync(join(root, file), 'utf8')));
  return out;
}

const readmes = [
  'README.md',
  ...readdirSync(root)
    .filter((d) => existsSync(join(root, d, 'README.md')))
    .map((d) => `${d}/README.md`),
];

/** Where a block is run besides this test: a file that does it, and what in that file shows it. */
type Elsewhere = { by: string; showing: string; why: string };
/** What a block run here showed, or why it could not run on this machine. */
type Outcome = { shown: string } | { skip: string };
/** A block run here; the one that `leads` starts first, and the others once it waits on a device's clock. */
type Here = { run: (block: Block) => Promise<Outcome>; leads?: true };
/** An account names its block by the README and how the block's first line begins. */
type Account = { file: string; first: string } & (Elsewhere | Here);

const names = (a: Account, b: Block) => a.file === b.file && b.first.startsWith(a.first);

const elsewhere = (file: string, first: string, by: string, showing: string, why: string): Account => ({ file, first, by, showing, why });

/** The quick start's later blocks, by how their first lines begin (`runQuickStart` runs them after `npm start`). */
const quickStart = {
  simulator: 'npm run simulator -- examples/single_line/substation.icd',
  example: 'npm run example -- --password',
};

/** A block's commands as bash runs them: its comments left out, its spaces collapsed. */
const commandsOf = (text: string) =>
  text
    .split('\n')
    .map((line) =>
      line
        .replace(/(^|\s+)#\s.*$/, '')
        .trim()
        .replace(/\s+/g, ' '),
    )
    .filter(Boolean)
    .join('\n');

const ranAlready = new Map<string, { file: string; outcome: Promise<Outcome> }>();

/**
 * Runs a block, unless a block of the same commands (they differ in their comments only) has run already: it
 * is then answered by that run, which it names. README.md and deploy/README.md show the same "running
 * services apart" commands; starting their keys, NATS server, database and two processes twice would
 * check nothing more (some 6 CPU-s).
 */
function onceForTheSameCommands(run: (block: Block) => Promise<Outcome>): (block: Block) => Promise<Outcome> {
  return (block) => {
    const commands = commandsOf(block.text);
    const earlier = ranAlready.get(commands);
    if (earlier)
      return earlier.outcome.then((o) =>
        'skip' in o ? o : { shown: `the same commands as the block of ${earlier.file}, run there: ${o.shown}` },
      );
    const outcome = run(block);
    ranAlready.set(commands, { file: block.file, outcome });
    return outcome;
  };
}

/** Every block, by its README and first line, and who runs it. */
const accounts: Account[] = [
  elsewhere(
    'README.md',
    'npm install && npm start',
    'test/process.test.ts',
    'spawn(startCommand[0], startCommand[1]',
    '`npm start` on embedded defaults, up and stopped',
  ),
  elsewhere('README.md', 'npm install && npm start', '.ci/run', 'npm install --no-audit', 'CI runs `npm install`'),
  { file: 'README.md', first: 'npm install && npm start', run: (b) => runQuickStart(b), leads: true },
  elsewhere(
    'README.md',
    quickStart.simulator,
    'test/readme_commands.test.ts',
    'async function runQuickStart(',
    "the quick start's second step, run in its order after `npm start`",
  ),
  elsewhere(
    'README.md',
    quickStart.example,
    'test/readme_commands.test.ts',
    'async function runQuickStart(',
    "the quick start's third step, run in its order after the simulator",
  ),
  elsewhere(
    'README.md',
    'npm test',
    '.ci/run',
    'npm test -- --reporter=tap',
    'CI runs the suite, on the embedded defaults and on PostgreSQL + NATS',
  ),
  elsewhere(
    'README.md',
    'npm run admin -- reset-password admin',
    'test/first_start.test.ts',
    "'reset-password', 'admin', '--stdin'",
    'the admin command, with and without --stdin',
  ),
  elsewhere(
    'README.md',
    'npm run admin -- reset-password admin',
    '.ci/run',
    'deno task admin reset-password admin',
    'its Deno form, in the Deno smoke step',
  ),
  { file: 'README.md', first: 'npm run bus-keys -- keys # once', run: onceForTheSameCommands(runServicesApart) },
  { file: 'deploy/README.md', first: 'npm run bus-keys -- keys # once', run: onceForTheSameCommands(runServicesApart) },
  elsewhere(
    'deploy/README.md',
    'npm run build',
    'deploy/smoke_bundles.ts',
    'dist/',
    'CI builds the bundles and starts each as the block does',
  ),
  elsewhere(
    'deploy/README.md',
    'docker build -f deploy/Dockerfile --build-arg TARGET=gateway -t',
    '.ci/deploy_check',
    'deploy/image_recipe.ts',
    'no Docker engine in CI: each image’s stages are performed as the Dockerfile says',
  ),
  elsewhere(
    'deploy/README.md',
    'helm repo add nats',
    '.ci/deploy_check',
    'kubectl kustomize',
    'no cluster in CI: the overlays are rendered and validated; the Helm values are held to their rendering by test/bus_trust.test.ts',
  ),
  elsewhere(
    'deploy/README.md',
    'npm run bus-keys -- keys # keys/gateway.pem',
    '.ci/deploy_check',
    'npm run --silent bus-keys',
    'no cluster in CI: the keys are made as the block makes them, and deploy/check_manifests.ts checks the names the manifests read',
  ),
  elsewhere(
    'deploy/README.md',
    'npm install && npm run build',
    '.ci/deploy_check',
    'image_recipe.ts "$target"',
    'needs root and systemd: what it installs is the edge bundle, which CI installs and starts as the edge image',
  ),
  elsewhere(
    'auth-service/README.md',
    'curl -si -c jar',
    'test/access.test.ts',
    'cookie',
    'sign-in with cookies, the current user, sign-out',
  ),
  elsewhere(
    'auth-service/README.md',
    'tokens=$(curl -s -d username=admin',
    'test/access_edges.test.ts',
    'refresh_token',
    'form sign-in, bearer requests, refresh',
  ),
  elsewhere(
    'auth-service/README.md',
    'curl -s -d username=operator -d otp_code=123456',
    'test/access_edges.test.ts',
    'otp_code',
    'the second factor',
  ),
  elsewhere('gateway/README.md', 'curl -N -H "$auth"', 'test/live.test.ts', 'topics=values', 'the live channel'),
  elsewhere(
    'protocol-service/README.md',
    'npx tsx simulator/src/main.ts test/fixtures/scl/feeder_relay.icd',
    'test/connections_api.test.ts',
    'feeder_relay.icd',
    'connections, start, session, browse, read and report blocks against the simulator',
  ),
  elsewhere(
    'protocol-service/README.md',
    'npx tsx simulator/src/main.ts test/fixtures/scl/protection_settings.icd',
    'test/setting_groups.test.ts',
    'setting-groups',
    'setting groups against the simulator',
  ),
  elsewhere(
    'protocol-service/README.md',
    'curl -H "$auth" "http://localhost:8081/api/connections/$id/files?path=COMTRADE"',
    'test/device_files.test.ts',
    'files/content',
    'file listing and download; the logs in test/device_logs.test.ts',
  ),
  elsewhere(
    'protocol-service/README.md',
    'curl -X PUT -H "$auth" -H "$json" http://localhost:8081/api/connections/$id \\',
    'test/connection_model.test.ts',
    'enableReports',
    'report blocks listed on the connection are enabled when its session starts, without a call to enable them',
  ),
  {
    file: 'simulator/README.md',
    first: 'npm run simulator -- test/fixtures/scl/feeder_relay.icd --port 10102',
    run: (b) => runSimulator(b),
  },
];

t.test('every sh block of the READMEs is accounted for, and every account names a block', async (t) => {
  const blocks = readmes.flatMap(shBlocks);
  t.ok(blocks.length > 10, `${blocks.length} blocks found`);
  for (const b of blocks)
    t.ok(
      accounts.some((a) => names(a, b)),
      `${b.file}: "${b.first}" is run here or by a named test or CI step`,
    );
  for (const a of accounts)
    t.ok(blocks.filter((b) => names(a, b)).length === 1, `the account of ${a.file}: "${a.first}" names one block that is there`);
  for (const a of accounts) {
    if (!('by' in a)) continue;
    const text = existsSync(join(root, a.by)) ? readFileSync(join(root, a.by), 'utf8') : '';
    t.ok(text.includes(a.showing), `${a.file}: "${a.first}" is run by ${a.by} (${a.why})`);
  }
});

/** Settled once the quick start waits on nothing but the simulator's clock, or has ended. */
let quickStartWaits: () => void = () => undefined;
const quickStartWaiting = new Promise<void>((resolve) => (quickStartWaits = resolve));

/**
 * The blocks run here start as the file loads, each in a folder, on ports, a NATS server and a database of
 * its own, so none meets another's. The quick start leads: once its simulator listens, it waits for the
 * simulator's trip indication to turn over (every wanderPace.flipMs, 20 s), and the other blocks run in that
 * time instead of after it. Each test below waits for its own block's outcome.
 */
const outcomes = new Map<Account, Promise<Outcome>>();
for (const a of accounts) {
  if (!('run' in a)) continue;
  const block = shBlocks(a.file).find((b) => names(a, b));
  const run = () => (block ? a.run(block) : Promise.reject(new Error('no such block')));
  const outcome = a.leads ? run() : quickStartWaiting.then(run);
  // A leader that ends before its simulator listens (it failed) lets the others start all the same.
  if (a.leads) void outcome.then(quickStartWaits, quickStartWaits);
  // Its test reports a failure; until that test awaits it, the rejection is not an unhandled one.
  outcome.catch(() => undefined);
  outcomes.set(a, outcome);
}

for (const a of accounts) {
  if (!('run' in a)) continue;
  t.test(`${a.file}: the block "${a.first}" runs as written`, async (t) => {
    const result = await (outcomes.get(a) as Promise<Outcome>);
    if ('skip' in result) t.ok(true, result.skip, { skip: result.skip });
    else t.pass(result.shown);
  });
}

/** "Running services apart": keys made, a protocol service and a gateway started, the gateway ready and seeing the service. */
async function runServicesApart(block: Block): Promise<Outcome> {
  if (!hasNatsServer()) return { skip: 'nats-server is not installed' };
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const db = await createDatabase(base).catch(() => null);
  if (!db) return { skip: `no PostgreSQL at ${base}` };
  const dir = await workFolder(root);
  const nats = await ownNats(dir);
  const httpPort = await freePort();
  const text = block.text
    .replaceAll('nats://127.0.0.1:4222', nats.url)
    .replaceAll('postgres://postgres@127.0.0.1:5432/scada', db.url)
    .replaceAll('HTTP_PORT=8081', `HTTP_PORT=${httpPort}`);
  // Not in the block: the HTTPS listener's fixed port stays off; the log is quiet.
  const run = runBlock(dir, text, { HTTPS_PORT: '0', LOG_LEVEL: 'warn' });
  try {
    const ready = await until(
      "the gateway's /readyz lists the protocol service",
      async () => {
        if (run.failed()) throw new Error('a command of the block failed');
        const res = await fetch(`http://127.0.0.1:${httpPort}/readyz`).catch(() => null);
        const body = res?.ok ? ((await res.json()) as { services?: Record<string, unknown[]> }) : null;
        return (body?.services?.protocol?.length ?? 0) > 0 ? body : undefined;
      },
      240_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${run.output().slice(-3000)}`);
    });
    if (!existsSync(join(dir, 'keys', 'secrets.key')) || !existsSync(join(dir, 'keys', 'trusted-keys.json')))
      throw new Error('no keys in keys/');
    return {
      shown: `its keys made, a protocol service and a gateway whose /readyz lists it (${ready?.services?.protocol?.length} replica)`,
    };
  } finally {
    await run.stop();
    await nats.stop();
    await db.drop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The simulator's own block: it listens on its port until stopped. */
async function runSimulator(block: Block): Promise<{ shown: string }> {
  const dir = await workFolder(root);
  const port = await freePort();
  const run = runBlock(dir, block.text.replaceAll('--port 10102', `--port ${port}`), {});
  try {
    await until(
      'the simulator listens',
      async () => {
        if (run.failed()) throw new Error(`the simulator did not start: ${run.output().slice(-2000)}`);
        return portOpen(port);
      },
      120_000,
    );
    return { shown: `the simulator serves MMS on its port (${port}) until stopped` };
  } finally {
    await run.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The README's quick start, in its order: `npm start` (the install is this checkout's own), the password it
 * frames changed as the console's first sign-in asks, the simulator, `npm run example` with the chosen
 * password; then what its fourth step shows, read through the API: the connection's value moving in its
 * history (the trend) and the "Feeder trip" alarm raised. Its fixed ports become free ones, HTTPS is off.
 */
async function runQuickStart(start: Block): Promise<{ shown: string }> {
  const blocks = shBlocks('README.md');
  const simulator = blocks.find((b) => b.first.startsWith(quickStart.simulator));
  const example = blocks.find((b) => b.first.startsWith(quickStart.example));
  if (!simulator || !example) throw new Error("the quick start's simulator and example blocks are not in the README");
  const dir = await workFolder(root);
  const [httpPort, devicePort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${httpPort}`;
  const began = Date.now();
  const took: string[] = [];
  const lap = (what: string) => took.push(`${what} at ${Math.round((Date.now() - began) / 1000)} s`);
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const runs: ReturnType<typeof runBlock>[] = [];
  const failing = (run: ReturnType<typeof runBlock>, what: string) => {
    if (run.failed()) throw new Error(`${what} failed:\n${run.output().slice(-3000)}`);
  };
  try {
    const platform = runBlock(dir, start.text.replace('npm install && ', ''), { HTTP_PORT: String(httpPort), HTTPS_PORT: '0' });
    runs.push(platform);
    // A first start on a busy machine opens a fresh embedded store in up to a minute (issue 43); room for more.
    const generated = await until(
      'npm start frames the generated password',
      async () => {
        failing(platform, 'npm start');
        return /password: (\S+)/.exec(platform.output())?.[1];
      },
      300_000,
    );
    await until('the platform is ready', async () => (await fetch(`${url}/readyz`).catch(() => null))?.ok, 60_000);
    lap('ready, password framed');

    // Step 1: signed in with the generated password, a new one chosen (the console asks for it first).
    const chosen = `quick-start-${randomBytes(8).toString('hex')}`;
    const first = await signIn(url, generated);
    const change = await fetch(`${url}/api/users/reset-password`, {
      method: 'POST',
      headers: { ...first, 'content-type': 'application/json' },
      body: JSON.stringify({ oldPassword: generated, newPassword: chosen, newPasswordAgain: chosen }),
    });
    if (change.status !== 204) throw new Error(`the password change answered ${change.status}: ${await change.text()}`);

    // Step 2: the simulator, on a free port instead of 10102.
    const device = runBlock(dir, simulator.text.replaceAll('--port 10102', `--port ${devicePort}`), {});
    runs.push(device);
    await until(
      'the simulator listens',
      async () => {
        failing(device, 'the simulator');
        return portOpen(devicePort);
      },
      120_000,
    );
    lap('simulator listening');
    quickStartWaits();

    // Step 3: the example, with the chosen password in place of the block's and the free ports named.
    const exampleText = example.text.replace("'your-new-password'", `'${chosen}' --url ${url} --device 127.0.0.1:${devicePort}`);
    if (exampleText === example.text) throw new Error("the example block no longer holds 'your-new-password'");
    const loading = runBlock(dir, exampleText, {});
    runs.push(loading);
    let limit: NodeJS.Timeout | undefined;
    const code = await Promise.race([loading.done, new Promise<number>((r) => (limit = setTimeout(() => r(-1), 180_000)))]);
    clearTimeout(limit); // a pending limit would keep the test file alive after its last test
    if (code !== 0 || !loading.output().includes('Loaded. Open'))
      throw new Error(`npm run example ended ${code}:\n${loading.output().slice(-3000)}`);
    lap('example loaded');

    // Step 4, through the API the console reads.
    const headers = await signIn(url, chosen);
    const connections = (await (await fetch(`${url}/api/connections`, { headers })).json()) as { id: string; name: string }[];
    const connection = connections.find((c) => c.name === 'Substation simulator');
    if (!connection) throw new Error(`no connection "Substation simulator" among ${JSON.stringify(connections)}`);
    const reference = 'SIMLD0/GGIO1.AnIn1.mag.f[MX]';
    // The load current moves every wanderPace.tickMs (1 s) once the session reports; a minute is room for its start.
    const values = await until(
      'the load current moves in its history',
      async () => {
        await pause(1000);
        const res = await fetch(`${url}/api/connections/${connection.id}/history?${new URLSearchParams({ reference })}`, { headers });
        const points = res.ok ? ((await res.json()) as { points: { value: unknown }[] }).points : [];
        return new Set(points.map((p) => p.value)).size >= 2 ? points : undefined;
      },
      120_000,
    );
    lap(`first values (${values.length} points)`);
    // The trip indication turns over every wanderPace.flipMs (20 s): the alarm is raised at its second turn at
    // the latest after the session's first report; twice that again is room for a busy machine.
    const alarm = await until(
      'the "Feeder trip" alarm is raised',
      async () => {
        await pause(1000);
        const res = await fetch(`${url}/api/alarms/active`, { headers });
        const active = res.ok ? ((await res.json()) as { name: string; state: string; active: boolean }[]) : [];
        return active.find((a) => a.name === 'Feeder trip' && a.state !== 'normal');
      },
      4 * wanderPace.flipMs + 30_000,
    );
    lap(`alarm ${alarm.state}`);
    return { shown: `the quick start as written: ${took.join(', ')}` };
  } finally {
    for (const run of runs.reverse()) await run.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Signs in as `admin`; answers the bearer header. A 503 or 504 is tried again after its `Retry-After` (a
 * second when it names none), as a person would: the password hash (scrypt at the default cost, 32 MiB three times over)
 * can outlast the gateway's deadline on a busy machine. Three minutes of that is a sign-in that does not work.
 */
async function signIn(url: string, password: string): Promise<Record<string, string>> {
  const end = Date.now() + 180_000;
  for (;;) {
    const res = await fetch(`${url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    if (res.status === 200) return { authorization: `Bearer ${((await res.json()) as { access_token: string }).access_token}` };
    if ((res.status !== 503 && res.status !== 504) || Date.now() > end)
      throw new Error(`signing in answered ${res.status}: ${await res.text()}`);
    await res.body?.cancel();
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
  }
}
