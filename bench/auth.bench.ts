/**
 * Identity and access costs, each against a baseline measured in the same run:
 * - logins per second through the gateway against bare scrypt checks per second in this process (the
 *   password hash should be the whole cost of a login);
 * - one echo route through a gateway with authentication, the IP filter and the space check on, against
 *   the same route on a gateway with them off (the checks are local and cached, not a bus round trip);
 * - the latency of one access-token verification in the gateway.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { parseSecretsKey, secretBox, signingKeyPurpose } from '@scada/auth';
import { defineOperation, requestSchema } from '@scada/contracts';
import { busAuthView, startGateway, staticAuthView } from '@scada/gateway';
import { implement, serve } from '@scada/platform';
import { importJWK, SignJWT, type JWK } from 'jose';
import { pino } from 'pino';
import { passwords, verifyPassword } from '@scada/auth/passwords';
import { launch } from '../launch.ts';
import { load, perSecond, table, type LoadResult } from './harness.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const password = 'bench-admin-password';

const echoOf = (checked: boolean) =>
  defineOperation({
    operationId: checked ? 'benchEchoChecked' : 'benchEchoOpen',
    service: 'config',
    summary: 'bench echo',
    tags: ['Bench'],
    request: requestSchema({ query: Type.Object({ text: Type.String({ maxLength: 100 }) }) }),
    response: Type.Object({ text: Type.String() }),
    http: { method: 'GET', path: '/bench/echo', status: 200, access: checked ? 'viewer' : 'public', spaceScoped: checked },
  });

const dataDir = await mkdtemp(join(tmpdir(), 'scada-bench-auth-'));
const log = pino({ level: 'warn' });
const proc = await launch(
  { DATA_DIR: dataDir, HTTP_PORT: '1', HTTPS_PORT: '0', ADMIN_PASSWORD: password, LOG_LEVEL: 'warn' },
  { log, host: '127.0.0.1', ephemeralPorts: true },
);
const url = `http://127.0.0.1:${proc.gateway!.httpPort}`;
try {
  // 1. Logins against bare hash checks, both with as many lanes as libuv has threads.
  const lanes = 4;
  const phc = await passwords().hash(password);
  // A few hashes a second make short runs noisy: alternate the two cases over several rounds and add
  // them up, so that both meet the same machine.
  const rounds = Number(process.env.AUTH_BENCH_ROUNDS ?? 3);
  let rawRate = 0;
  let loginRate = 0;
  for (let round = 0; round < rounds; round++) {
    rawRate += (await perSecond(lanes, seconds * 1000, () => verifyPassword(password, phc))) / rounds;
    loginRate +=
      (await perSecond(lanes, seconds * 1000, async () => {
        const res = await fetch(`${url}/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password }),
        });
        if (res.status !== 200) throw new Error(`login answered ${res.status}`);
        await res.arrayBuffer();
      })) / rounds;
  }
  console.log(`### Logins against bare scrypt checks (${lanes} lanes, ${rounds} alternating rounds of ${seconds} s each)\n`);
  console.log('| case | per second | ratio to baseline |\n|---|---:|---:|');
  console.log(`| scrypt verify in process (baseline) | ${rawRate.toFixed(2)} | 1.00 |`);
  console.log(`| POST /login through the gateway | ${loginRate.toFixed(2)} | ${(loginRate / rawRate).toFixed(2)} |\n`);

  // 2. One echo route with every check on, against the same route with none.
  const login = await fetch(`${url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  const { access_token: token } = (await login.json()) as { access_token: string };
  const checked = echoOf(true);
  const open = echoOf(false);
  const service = await serve(
    proc.bus,
    { name: 'benchecho', version: '0.0.0', instance: 'bench' },
    [implement(checked, async (req) => ({ text: req.query.text })), implement(open, async (req) => ({ text: req.query.text }))],
    log,
  );
  await proc.bus.flush();
  const common = {
    bus: proc.bus,
    log,
    config: { ...proc.config.gateway!, httpsPort: 0 },
    dataDir,
    busTimeoutMs: 5000,
    shutdownGraceMs: 1000,
    host: '127.0.0.1',
    ephemeralPorts: true,
  };
  const on = await startGateway({ ...common, operations: [checked], auth: busAuthView({ bus: proc.bus, log, timeoutMs: 5000 }) });
  const off = await startGateway({ ...common, operations: [open], auth: staticAuthView() });
  const headers = { authorization: `Bearer ${token}`, 'x-space': 'default' };
  await load('warm-up', `http://127.0.0.1:${on.httpPort}/bench/echo?text=hi`, { seconds: 1, headers });
  await load('warm-up', `http://127.0.0.1:${off.httpPort}/bench/echo?text=hi`, { seconds: 1 });
  // Alternating rounds, summed, as for the logins: one short run of each swings with the machine.
  const runs: { off: LoadResult[]; on: LoadResult[] } = { off: [], on: [] };
  for (let round = 0; round < rounds; round++) {
    runs.off.push(await load('echo, no checks (baseline)', `http://127.0.0.1:${off.httpPort}/bench/echo?text=hi`, { seconds }));
    runs.on.push(
      await load('echo, bearer + IP filter + X-Space + role', `http://127.0.0.1:${on.httpPort}/bench/echo?text=hi`, { seconds, headers }),
    );
  }
  const mean = (list: LoadResult[]): LoadResult => ({
    ...list[0],
    rps: Math.round(list.reduce((a, r) => a + r.rps, 0) / list.length),
    p50: Math.max(...list.map((r) => r.p50)),
    p99: Math.max(...list.map((r) => r.p99)),
    errors: list.reduce((a, r) => a + r.errors, 0),
    non2xx: list.reduce((a, r) => a + r.non2xx, 0),
  });
  console.log(
    table(`Echo with and without the access checks, ${rounds} alternating rounds of ${seconds} s, 32 connections`, mean(runs.off), [
      mean(runs.on),
    ]),
  );
  await on.stop();
  await off.stop();
  await service.stop();

  // 3. Token verification in the gateway: first sight of a token (signature check), then a known one.
  const view = busAuthView({ bus: proc.bus, log, timeoutMs: 5000 });
  await view.start();
  await view.verifyAccess(token, 'warm');
  const { rows } = await proc.store!.query<{ kid: string; private_jwk: string }>('select kid, private_jwk from auth.signing_keys limit 1');
  // Sealed at rest: opened with the generated key of the embedded mode.
  const box = secretBox(parseSecretsKey(await readFile(join(dataDir, 'secrets.key'), 'utf8'))!);
  const key = await importJWK(
    { ...(JSON.parse(box.open(rows[0]!.private_jwk, signingKeyPurpose(rows[0]!.kid))) as JWK), alg: 'EdDSA' },
    'EdDSA',
  );
  const claims = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;
  const fresh = await Promise.all(
    Array.from({ length: 2000 }, (_, i) =>
      new SignJWT({ ...claims, jti: `bench-${i}` }).setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: rows[0]!.kid }).sign(key),
    ),
  );
  const time = async (tokens: string[]) => {
    const samples: number[] = [];
    for (const t of tokens) {
      const t0 = performance.now();
      await view.verifyAccess(t, 'bench');
      samples.push(performance.now() - t0);
    }
    samples.sort((a, b) => a - b);
    return (q: number) => (samples[Math.floor(q * (samples.length - 1))] as number).toFixed(3);
  };
  const cold = await time(fresh);
  const warm = await time(Array.from({ length: 20000 }, () => token));
  await view.stop();
  console.log('\n### Access-token verification in the gateway (EdDSA)\n');
  console.log('| case | p50 ms | p99 ms |\n|---|---:|---:|');
  console.log(`| first sight of a token (signature check), 2,000 tokens | ${cold(0.5)} | ${cold(0.99)} |`);
  console.log(`| a token already verified, 20,000 requests | ${warm(0.5)} | ${warm(0.99)} |`);
} finally {
  await proc.stop();
  await rm(dataDir, { recursive: true, force: true });
}
