/**
 * The V8 flags a platform process sets for itself as it starts (`processV8Flags`, applied by `runProcess`):
 * V8's baseline WebAssembly compiler only when the process opens the embedded store and
 * `EMBEDDED_STORE_COMPILER` does not ask for the optimising one, and nothing for a process on PostgreSQL
 * or one without a store, so that their WebAssembly (the script sandbox's) keeps V8's defaults.
 */
import { randomBytes } from 'node:crypto';
import { processV8Flags } from '@scada/platform';
import t from 'tap';
import { allParts, readProcessConfig } from '../launch.ts';

const flags = (env: Record<string, string>) => processV8Flags(readProcessConfig(env), allParts);

t.test('the embedded store: baseline compiler only, unless told optimizing', async (t) => {
  t.same(flags({}), ['--liftoff-only'], 'the all-in-one on its defaults');
  t.same(flags({ EMBEDDED_STORE_COMPILER: 'baseline' }), ['--liftoff-only']);
  t.same(flags({ SERVICES: 'protocol', SITE: 'substation-1' }), ['--liftoff-only'], 'an edge site');
  t.same(flags({ EMBEDDED_STORE_COMPILER: 'optimizing' }), [], "V8's defaults when told optimizing");
});

t.test('no embedded store, no flag', async (t) => {
  const onPostgres = { DATABASE_URL: 'postgres://127.0.0.1:5432/test', SECRETS_KEY: randomBytes(32).toString('base64') };
  t.same(flags(onPostgres), [], 'the all-in-one on PostgreSQL');
  t.same(flags({ ...onPostgres, SERVICES: 'config' }), [], 'a config pod: its script sandbox keeps the optimising compiler');
  t.same(flags({ SERVICES: 'gateway' }), [], 'the gateway alone opens no store');
});
