// Starts the embedded store's worker from the TypeScript sources under Node (development, tests): a worker
// thread does not inherit the main thread's `--import tsx`, so it registers tsx itself before loading the
// worker. The bundles start their compiled worker chunk directly, and Deno runs the TypeScript file as it is.
import { register } from 'tsx/esm/api';

register();
await import('./pglite_worker.ts');
