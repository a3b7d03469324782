/**
 * `npm run admin -- <command>`: administration from the machine the platform runs on (see
 * auth-service/src/admin_cli.ts). It alone reads the process's environment and standard streams.
 */
import { text } from 'node:stream/consumers';
import { runAdmin } from '@scada/auth/admin';

process.exitCode = await runAdmin(process.argv.slice(2), process.env, {
  readStdin: () => text(process.stdin),
  stdout: (s) => void process.stdout.write(s),
  stderr: (s) => void process.stderr.write(s),
});
