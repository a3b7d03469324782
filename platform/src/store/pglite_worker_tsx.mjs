// Starts the embedded store's worker from the TypeScript sources under a Node that cannot strip types itself
// (Node 20; development, tests): a worker thread does not inherit the main thread's `--import tsx`, so it
// registers tsx itself before loading the worker. The bundles start their compiled worker chunk directly, and
// Deno and a Node that strips types (22.18 and later) run the TypeScript file as it is.
import { register } from 'tsx/esm/api';

register();
await import('./pglite_worker.ts');
