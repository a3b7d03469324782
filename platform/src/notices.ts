import { createServer } from 'node:net';
import { ConfigError } from './env.ts';

/**
 * Words for the operator at the console, left by a service during start-up (the generated administrator
 * password): the process shows them once, framed on stderr, when it listens and knows its URLs.
 */
export type Notices = { add(lines: string[]): void };

/** A few lines in a frame of plain ASCII, so that they stand out of the log lines around them. */
export function framed(lines: string[]): string {
  const width = Math.max(0, ...lines.map((l) => l.length));
  const bar = `+${'-'.repeat(width + 2)}+`;
  return `\n${[bar, ...lines.map((l) => `| ${l.padEnd(width)} |`), bar].join('\n')}\n\n`;
}

/**
 * Refuses, before anything is created or written, when a port the process will listen on is taken: binds
 * each one for a moment and lets it go. Answers a ConfigError naming every busy port and its variable.
 */
export async function checkPortsFree(ports: { variable: string; port: number }[], host?: string): Promise<void> {
  const busy: string[] = [];
  for (const { variable, port } of ports) {
    if (port === 0) continue;
    const problem = await tryBind(port, host);
    if (problem) busy.push(`${variable}: port ${port} ${problem}; stop what uses it, or choose another port with ${variable}`);
  }
  if (busy.length > 0) throw new ConfigError(busy);
}

function tryBind(port: number, host?: string): Promise<string | null> {
  return new Promise((resolve) => {
    // A client that connects in that moment (a health check polling for the start) is let go at once.
    const server = createServer((socket) => socket.destroy());
    server.once('error', (err: NodeJS.ErrnoException) => {
      resolve(
        err.code === 'EADDRINUSE'
          ? 'is in use'
          : err.code === 'EACCES'
            ? 'needs privileges this process has not'
            : `cannot be listened on (${err.code ?? err.message})`,
      );
    });
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(null)));
  });
}
