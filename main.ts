/**
 * The platform's entry point: `npm start` (Node with tsx) and `deno task start` run this file. It alone
 * reads the environment; everything else is given what it needs.
 */
import { ConfigError } from '@scada/platform';
import { launch, type PlatformProcess } from './launch.ts';

let starting: Promise<PlatformProcess> | null = null;
let stopping = false;

async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    // A second signal: the operator wants out now.
    process.exit(1);
  }
  stopping = true;
  // A signal during start-up waits for the start to finish, then stops what it started.
  const running = await starting?.catch(() => null);
  if (!running) process.exit(0);
  running.log.info({ signal }, 'shutting down');
  try {
    await running.stop();
    process.exit(0);
  } catch (err) {
    running.log.error({ err }, 'shutdown failed');
    process.exit(1);
  }
}

process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

try {
  starting = launch(process.env);
  const running = await starting;
  running.log.info({ services: running.config.platform.services }, 'platform started');
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`start-up failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
}
