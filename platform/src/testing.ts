/**
 * `@scada/platform/testing`: the parts tests, benchmarks and tools build on beside the services' entry —
 * each store class to open a database directly, the migration runner, the unpacking of a store template,
 * and the in-process bus.
 */
export { migrate } from './store/migrate.ts';
export { PGliteStore } from './store/pglite_store.ts';
export { unpackStoreTemplate } from './store/template_tar.ts';
export { PgStore } from './store/pg_store.ts';
export { ContextVerifier, type ContextClaimsByHand } from './bus/trust.ts';
