import { writeSync } from 'node:fs';
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
 * log writes one per request). A process stopped by SIGTERM or SIGINT waits (up to 2 s) until every
 * line is written; at any other exit, a crash included, what waits is written synchronously, except a
 * block the destination is still writing to a pipe that reads slowly: that block is missing and the
 * lines after it (the crash's own among them) are written, so the log shows a gap before its last lines,
 * as pino's own asynchronous destination does. SIGKILL loses what waits. The lines of a block are
 * gathered by `LineBatch`, not by the destination itself.
 */
export async function createLogger(options: { level: string; pretty?: boolean; name?: string }): Promise<Logger> {
  const base = {
    level: options.level,
    name: options.name,
    redact: { paths: redactPaths, censor: '[redacted]' },
    serializers: { err: serializeError },
  };
  const wantPretty = options.pretty ?? (process.stdout.isTTY === true && process.env.NODE_ENV !== 'production');
  if (!wantPretty) return pino(base, new LineBatch(1, 4096, 200));
  const { default: pretty } = await import('pino-pretty');
  return pino(base, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
}

type Destination = ReturnType<typeof pino.destination>;

/**
 * The most bytes of log lines waiting for a standard output that is not read (a stopped pager, a full pipe):
 * past it whole blocks of lines are dropped, and a warn line says how many once the output takes lines again.
 */
export const maxUnwrittenBytes = 16 * 2 ** 20;

/**
 * Lines gathered in memory and handed to a destination on `fd` as one string once `minChars` have gathered
 * or `maxDelayMs` have passed. The destination can gather by itself (`minLength`), but it measures the
 * UTF-8 length of everything it holds on every line it is given, which made a log line cost 2.5 µs
 * instead of 0.2: a tenth of what the gateway spent on a health check. Here a line costs an array push;
 * the block is joined and measured once. Kept by measure: an access line through pino into this ran
 * 1.18–1.61 × (medians of three runs) as many a second as into `pino.destination({ minLength: 4096 })`,
 * bench/parts.bench.ts, 2026-11-26.
 */
export class LineBatch {
  readonly #fd: number;
  readonly #sink: Destination;
  readonly #minChars: number;
  readonly #maxDelayMs: number;
  #lines: string[] = [];
  #chars = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Whether a block handed to the destination may not be written yet: it says `drain` once all is. */
  #unwritten = false;
  /** Lines dropped since the output was last taken in, for the line that says so. */
  #droppedLines = 0;

  constructor(fd: number, minChars: number, maxDelayMs: number) {
    this.#fd = fd;
    this.#sink = pino.destination({ dest: fd, sync: false, maxLength: maxUnwrittenBytes });
    this.#sink.on('drop', (block: string) => {
      this.#droppedLines += block.split('\n').length - 1;
    });
    this.#sink.on('drain', () => {
      this.#unwritten = false;
      if (this.#droppedLines > 0) this.#sayDropped();
    });
    this.#minChars = minChars;
    this.#maxDelayMs = maxDelayMs;
    // The destination writes what it holds at exit; what is still gathered here follows it, in order.
    process.once('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= this.#minChars) this.#hand();
    else this.#timer ??= setTimeout(() => this.#hand(), this.#maxDelayMs).unref();
    return true;
  }

  /** Hands what is gathered to the destination and calls `done` once everything is written. */
  flush(done?: (err?: Error) => void): void {
    this.#hand();
    if (!done) return;
    if (this.#unwritten) this.#sink.once('drain', () => done());
    else done();
  }

  /** Writes everything, the destination's and then what is gathered here, before returning. */
  flushSync(): void {
    const rest = this.#take();
    try {
      this.#sink.flushSync();
    } catch {
      // Not open yet, or closed: what is gathered here is still written below.
    }
    try {
      if (rest) writeSync(this.#fd, rest);
    } catch {
      // Nowhere to write to (closed, or a pipe that takes nothing more): nothing else can be done at exit.
    }
  }

  /** One line, as pino writes a warn line, saying how many lines the full output made the process drop. */
  #sayDropped(): void {
    const dropped = this.#droppedLines;
    this.#droppedLines = 0;
    const msg = `log lines dropped: the process's output was not read and ${maxUnwrittenBytes / 2 ** 20} MiB waited`;
    this.#unwritten = true;
    this.#sink.write(`${JSON.stringify({ level: 40, time: Date.now(), pid: process.pid, dropped, msg })}\n`);
  }

  #hand(): void {
    const text = this.#take();
    if (!text) return;
    this.#unwritten = true;
    this.#sink.write(text);
  }

  #take(): string {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#lines.length === 0) return '';
    const text = this.#lines.join('');
    this.#lines = [];
    this.#chars = 0;
    return text;
  }
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
