/**
 * Password hashing below the HTTP API: the PHC format, each hash verified at its own cost, constant
 * answers for malformed hashes, and the `PASSWORD_HASH_COST` setting's bounds.
 */
import { EnvReader } from '@scada/platform';
import t from 'tap';
import { readAuthConfig } from '../src/config.ts';
import { defaultHashCost, lowestTestHashCost, paramsOf, passwords, verifyPassword } from '../src/domain/passwords.ts';

/** A hash as the platform stored it before its default became 2^15, p=3: OWASP's N=2^17, r=8, p=1. */
const storedAt17 = '$scrypt$ln=17,r=8,p=1$W1Q0pIuYF5fyM1OShGECgQ$aagm1Iy3H8oqQ2W53LInO18G8sk66kGlAYLowymlz3M';

t.test('a hash names its cost, salt and key, and verifies only its own password', async (t) => {
  const cheap = passwords(lowestTestHashCost);
  const phc = await cheap.hash('valve-room-42');
  t.match(phc, new RegExp(`^\\$scrypt\\$ln=${lowestTestHashCost},r=8,p=1\\$[A-Za-z0-9+/]{22}\\$[A-Za-z0-9+/]{43}$`));
  t.equal(await cheap.verify('valve-room-42', phc), true);
  t.equal(await cheap.verify('valve-room-43', phc), false);
  t.not(await cheap.hash('valve-room-42'), phc, 'a fresh salt every time');
});

t.test('each hash keeps its own cost: a hash made at one cost verifies after the setting changed', async (t) => {
  const old = await passwords(lowestTestHashCost).hash('pump-station-7');
  const raised = passwords(lowestTestHashCost + 2);
  t.equal(await raised.verify('pump-station-7', old), true);
  t.match(await raised.hash('pump-station-7'), `$scrypt$ln=${lowestTestHashCost + 2},`, 'new hashes take the new cost');
});

t.test("new hashes by default: OWASP's N=2^15, r=8, p=3 (32 MiB), named in the PHC string", async (t) => {
  t.equal(defaultHashCost, 15);
  const p = passwords();
  const phc = await p.hash('bay-controller-15');
  t.match(phc, /^\$scrypt\$ln=15,r=8,p=3\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  t.equal(await p.verify('bay-controller-15', phc), true);
  t.equal(await p.verify('bay-controller-16', phc), false);
});

t.test('a hash stored at the old default (2^17, p=1) still verifies, at the cost it names', async (t) => {
  const p = passwords();
  t.equal(await p.verify('substation-admin-2017', storedAt17), true);
  t.equal(await p.verify('substation-admin-2018', storedAt17), false);
});

t.test("each cost from 13 to 17 hashes with the parallelism OWASP pairs with it; p=1 above 17 and in test runs' cheap costs", async (t) => {
  const owasp: [number, number][] = [
    [13, 10],
    [14, 5],
    [15, 3],
    [16, 2],
    [17, 1],
  ];
  for (const [cost, parallelism] of owasp) {
    const phc = await passwords(cost).hash('relay-room-door');
    t.match(phc, `$scrypt$ln=${cost},r=8,p=${parallelism}$`, `2^${cost}`);
    t.equal(await verifyPassword('relay-room-door', phc), true, `2^${cost} verifies`);
  }
  t.match(await passwords(lowestTestHashCost + 2).hash('relay-room-door'), `$scrypt$ln=${lowestTestHashCost + 2},r=8,p=1$`);
});

t.test('the password is compared in Unicode normal form C', async (t) => {
  const phc = await passwords(lowestTestHashCost).hash('caf\u00e9-control');
  t.equal(await verifyPassword('cafe\u0301-control', phc), true, 'the decomposed spelling is the same password');
});

t.test('a malformed or foreign hash never matches, and never throws', async (t) => {
  const good = await passwords(lowestTestHashCost).hash('feeder-3-breaker');
  const broken = [
    '',
    'plain-text',
    '$2b$10$abcdefghijklmnopqrstuuQ0j1x5Qy7m3cYk4bH8v0c1r2s3t4u5v',
    good.replace('$scrypt$', '$argon2id$'),
    good.replace(/\$[^$]+$/, '$not*base64'),
    good.replace(/ln=\d+/, 'ln=x'),
  ];
  for (const phc of broken) t.equal(await verifyPassword('feeder-3-breaker', phc), false, JSON.stringify(phc));
});

t.test('burn spends a check and answers false, whatever the password', async (t) => {
  const p = passwords(lowestTestHashCost);
  t.equal(await p.burn('anything-at-all'), false);
  t.equal(await p.burn('x'.repeat(10_000)), false, 'a password far over the longest ever stored');
});

t.test('burn takes the cost of a stored hash it is given, and only a cost this platform could have made', async (t) => {
  const p = passwords(10);
  const older = await passwords(11).hash('an older password');
  t.same(paramsOf(older), { log2N: 11, r: 8, p: 1 }, 'a stored hash names its cost');
  t.same(paramsOf('$scrypt$ln=17,r=8,p=1$'), { log2N: 17, r: 8, p: 1 }, 'so does the start of one');
  for (const foreign of ['$scrypt$ln=31,r=8,p=1$', '$scrypt$ln=15,r=99,p=1$', '$scrypt$ln=15,r=8,p=0$', '$argon2id$v=19$', '']) {
    t.equal(paramsOf(foreign), null, `not one of ours: ${JSON.stringify(foreign)}`);
  }
  t.equal(await p.burn('whatever it is', older), false, "at the stored hash's cost");
  t.equal(await p.burn('whatever it is', '$scrypt$ln=31,r=8,p=1$'), false, 'a foreign cost falls back to the cost of new hashes');
  t.equal(await p.burn('whatever it is', undefined), false, 'and so does none');
});

t.test('PASSWORD_HASH_COST: production cost by default, lower only in a test run', async (t) => {
  const read = (env: Record<string, string>) => {
    const reader = new EnvReader(env);
    const config = readAuthConfig(reader);
    return { config, finish: () => reader.finish() };
  };
  t.equal(read({}).config.passwordHashCost, defaultHashCost);
  t.equal(read({ PASSWORD_HASH_COST: '13' }).config.passwordHashCost, 13, "OWASP's lowest setting in production");
  t.equal(read({ PASSWORD_HASH_COST: '20' }).config.passwordHashCost, 20);
  t.equal(read({ NODE_ENV: 'test', PASSWORD_HASH_COST: '12' }).config.passwordHashCost, 12);
  t.throws(
    () => read({ PASSWORD_HASH_COST: '12' }).finish(),
    /PASSWORD_HASH_COST: must be an integer from 13 to 20/,
    'refused outside a test run',
  );
  t.throws(() => read({ NODE_ENV: 'test', PASSWORD_HASH_COST: String(lowestTestHashCost - 1) }).finish(), /PASSWORD_HASH_COST/);
  t.throws(() => read({ PASSWORD_HASH_COST: '21' }).finish(), /PASSWORD_HASH_COST/);
});
