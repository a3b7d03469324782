import { pino, type Logger } from 'pino';

/** Paths that never reach a log line. */
const redactPaths = [
  'password',
  '*.password',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'access_token',
  'refresh_token',
  'otp_code',
  'otp_token',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
];

/**
 * The platform's logger: JSON lines in production and when the output is not a terminal, readable
 * coloured lines in a terminal. Secrets are redacted by path. The formatter of readable lines (thirty
 * modules) is loaded only for a terminal, never in a pod.
 *
 * JSON lines go to standard output asynchronously, in blocks: a line waits in memory until 4 KiB have
 * gathered or 200 ms have passed, instead of one blocking write per line on the request path (the access
 * log writes one per request). What waits is written when the process exits, a crash included; only
 * SIGKILL loses it.
 */
export async function createLogger(options: { level: string; pretty?: boolean; name?: string }): Promise<Logger> {
  const base = {
    level: options.level,
    name: options.name,
    redact: { paths: redactPaths, censor: '[redacted]' },
    serializers: { err: serializeError },
  };
  const wantPretty = options.pretty ?? (process.stdout.isTTY === true && process.env.NODE_ENV !== 'production');
  if (!wantPretty) return pino(base, pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 200 }));
  const { default: pretty } = await import('pino-pretty');
  return pino(base, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
}

/**
 * Errors as pino writes them, without the driver objects some libraries hang on them (`pg` attaches its
 * client, with the connection parameters, to pool errors).
 */
function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const out = pino.stdSerializers.err(err) as unknown as Record<string, unknown>;
  delete out.client;
  delete out.connection;
  // A store error may carry the statement's parameters (PGlite attaches them): values are never logged,
  // since they may be password hashes, file contents or anything else a client sent.
  delete out.params;
  if (out.cause && typeof out.cause === 'object') delete (out.cause as Record<string, unknown>).params;
  return out;
}

export type { Logger };
