/**
 * `.ci/run`'s NATS with authentication: writes into a folder the configuration of a nats-server that
 * carries the platform's shipped permissions (for test prefixes) and a harness user, and prints the
 * environment lines that start it (`NATS_<ROLE>_PASSWORD`) and that sign the suite in (`NATS_USER` as
 * the all-in-one `platform` role, `SCADA_TEST_NATS_USER` for the harness's own connections).
 *
 *   node --import tsx tools/test-setup/auth_nats.ts <folder> <port>
 */
import { mkdirSync } from 'node:fs';
import { writeAuthNatsConfig } from '@scada/testkit/nats_auth';

const [dir, port] = process.argv.slice(2);
if (!dir || !port) {
  process.stderr.write('usage: auth_nats.ts <folder> <port>\n');
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
const config = writeAuthNatsConfig(dir, Number(port));
const lines = {
  ...config.env,
  NATS_AUTH_CONFIG: config.file,
  NATS_USER: 'platform',
  NATS_PASSWORD: config.passwords.platform,
  SCADA_TEST_NATS_USER: config.harness.user,
  SCADA_TEST_NATS_PASSWORD: config.harness.pass,
};
for (const [name, value] of Object.entries(lines)) process.stdout.write(`export ${name}=${JSON.stringify(value)}\n`);
