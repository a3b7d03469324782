/**
 * The contracts: the one place the gateway and the services agree on subjects, message schemas and problem
 * codes.
 */
export * from './problems.ts';
export * from './headers.ts';
export * from './operation.ts';
export * from './system.ts';
export * from './registry.ts';
export * from './staging.ts';
export * from './event.ts';
export * from './events.ts';
export * from './service_calls.ts';
export * from './validate.ts';
export * from './query.ts';
export * from './auth/mod.ts';
export * from './config/mod.ts';
export * from './protocol/scl_model.ts';
export * from './protocol/connections.ts';
export * from './protocol/sites.ts';
export * from './protocol/connection_ops.ts';
export * from './protocol/live.ts';
export * from './protocol/device_records.ts';
export * from './protocol/setting_groups.ts';
export * from './protocol/events.ts';
export * from './protocol/live_channel.ts';
export * from './history/ops.ts';
export * from './protocol/alarms.ts';
