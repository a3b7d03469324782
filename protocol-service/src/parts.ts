/**
 * Parts of the protocol service's value path, exported for the in-process benchmark of that path
 * (bench/value_path.bench.ts); nothing of the service imports this file.
 */
export { entryEventId } from './sessions/report_delivery.ts';
