// Runs one autocannon load on a worker thread (see `load` in harness.ts) and posts its summary back.
// Plain JavaScript: a worker thread does not inherit the TypeScript loader of the process that starts it.
import { parentPort, workerData } from 'node:worker_threads';
import autocannon from 'autocannon';

const options = workerData;
const run = {
  url: options.url,
  connections: options.connections ?? 32,
  duration: options.seconds ?? 5,
  headers: options.headers,
  method: options.method ?? 'GET',
  body: options.body,
  // A sequence each connection sends in turn (a mix of reads and writes), relative to `url`.
  requests: options.requests,
  // `[<id>]` in a body becomes a fresh id per request, so creates do not collide on unique names.
  idReplacement: options.body?.includes('[<id>]') ?? false,
};
// Off the main thread autocannon answers its raw counts; it sums them itself when asked.
const raw = await autocannon(run);
const result = autocannon.aggregateResult([raw], run);
parentPort?.postMessage({
  rps: Math.round(result.requests.total / raw.duration),
  total: result.requests.total,
  p50: result.latency.p50,
  p99: result.latency.p99,
  errors: result.errors + result.timeouts,
  non2xx: result.non2xx,
});
