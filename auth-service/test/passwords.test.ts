/**
 * Password hashing below the HTTP API: the PHC format, each hash verified at its own cost, constant
 * answers for malformed hashes, and the `PASSWORD_HASH_COST` setting's bounds.
 */
import { EnvReader } from '@scada/platform';
import t from 'tap';
import { readAuthConfig } from '../src/config.ts';
import { defaultHashCost, lowestTestHashCost, passwords, verifyPassword } from '../src/domain/passwords.ts';

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

t.test('PASSWORD_HASH_COST: production cost by default, lower only in a test run', async (t) => {
  const read = (env: Record<string, string>) => {
    const reader = new EnvReader(env);
    const config = readAuthConfig(reader);
    return { config, finish: () => reader.finish() };
  };
  t.equal(read({}).config.passwordHashCost, defaultHashCost);
  t.equal(read({ NODE_ENV: 'test', PASSWORD_HASH_COST: '12' }).config.passwordHashCost, 12);
  t.throws(
    () => read({ PASSWORD_HASH_COST: '12' }).finish(),
    /PASSWORD_HASH_COST: must be an integer from 17 to 20/,
    'refused outside a test run',
  );
  t.throws(() => read({ NODE_ENV: 'test', PASSWORD_HASH_COST: String(lowestTestHashCost - 1) }).finish(), /PASSWORD_HASH_COST/);
  t.throws(() => read({ PASSWORD_HASH_COST: '21' }).finish(), /PASSWORD_HASH_COST/);
});
