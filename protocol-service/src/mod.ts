/** The protocol service. */
export { protocolService } from './service.ts';
/** An operation as the replica holding a connection serves it, on a subject of its own (for stand-ins in benchmarks). */
export { atInstance } from './handlers/device_ops.ts';
