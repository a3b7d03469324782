/**
 * The history service's recording, exported for its benchmark on the store alone
 * (bench/store_ingest_work.ts); nothing of the service imports this file.
 */
export { record } from './ingest.ts';
export { Partitions } from './partitions.ts';
