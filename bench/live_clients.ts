/**
 * The SSE clients of `live.bench.ts`, in a process of their own so that reading does not share the
 * gateway's event loop. Opens `CLIENTS` streams on `URL` (each following one of `CONNECTIONS`, by
 * `?connections=`), counts the `value` events each receives and the latency of each from its
 * `receivedAt` to its arrival, and answers on stdout as JSON when it gets SIGUSR2 (results) or when
 * all streams are open (`{"open": n}`).
 */
import http from 'node:http';

const url = process.env.URL!;
const count = Number(process.env.CLIENTS);
const connections = process.env.CONNECTIONS!.split(',');
const headers = JSON.parse(process.env.HEADERS ?? '{}') as Record<string, string>;
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const marker = '"receivedAt":"';

let delivered = 0;
let latencies: number[] = [];
let counting = false;
let open = 0;

function follow(i: number): void {
  const target = `${url}${url.includes('?') ? '&' : '?'}connections=${connections[i % connections.length]}&topics=values`;
  http
    .get(target, { agent, headers }, (res) => {
      if (res.statusCode !== 200) {
        process.stderr.write(`client ${i}: ${res.statusCode}\n`);
        res.resume();
        return;
      }
      if (++open === count) process.stdout.write(`${JSON.stringify({ open })}\n`);
      res.setEncoding('utf8');
      let rest = '';
      res.on('data', (chunk: string) => {
        const text = rest + chunk;
        const end = text.lastIndexOf('\n\n');
        if (end < 0) return void (rest = text);
        rest = text.slice(end + 2);
        if (!counting) return;
        const now = Date.now();
        let at = text.indexOf(marker);
        while (at >= 0 && at < end) {
          const t = Date.parse(text.slice(at + marker.length, at + marker.length + 24));
          delivered++;
          if (latencies.length < 2_000_000) latencies.push(now - t);
          at = text.indexOf(marker, at + marker.length);
        }
      });
    })
    .on('error', (err) => process.stderr.write(`client ${i}: ${err.message}\n`));
}

process.on('SIGUSR1', () => {
  delivered = 0;
  latencies = [];
  counting = true;
});
process.on('SIGUSR2', () => {
  counting = false;
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  process.stdout.write(`${JSON.stringify({ delivered, p50: q(0.5), p99: q(0.99) })}\n`, () => process.exit(0));
});
for (let i = 0; i < count; i++) follow(i);
