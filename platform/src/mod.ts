/** The platform runtime shared by the gateway and the services: bus, store, rpc, logging, configuration. */
export * from './bus/bus.ts';
export { MemoryBus } from './bus/memory_bus.ts';
export * from './bus/event_log.ts';
export * from './bus/durable_events.ts';
export { eventStreamName } from './bus/nats_event_log.ts';
export * from './bus/space_versions.ts';
export * from './bus/site_streams.ts';
export { spaceVersionsBucket } from './bus/nats_space_versions.ts';
export * from './store/store.ts';
export * from './rpc.ts';
export { mapInPieces, slices } from './json_pieces.ts';
export { loopDelayMetric } from './loop_delay.ts';
export * from './staging.ts';
export * from './handler_kit.ts';
export * from './log.ts';
export * from './env.ts';
export * from './config.ts';
export * from './service_host.ts';
export * from './migrations_dir.ts';
export { PrefixedBus } from './bus/prefixed_bus.ts';
export { NatsBus } from './bus/nats_bus.ts';
export { openStore, storeTemplateFile } from './store/open.ts';
export { FolderLockedError } from './store/lock_file.ts';
export * from './health_server.ts';
export * from './launcher.ts';
export * from './presence.ts';
export * from './notices.ts';
export * from './private_dir.ts';
export * from './worker_entry.ts';
export * from './secrets.ts';
export {
  busRoles,
  busTrustFrom,
  ContextSigner,
  contextLifetimeSeconds,
  identityFromPem,
  newBusKey,
  parseTrustedKeys,
  trustedKeyEntry,
  type BusRole,
  type BusTrust,
} from './bus/trust.ts';
export { SignedBus } from './bus/signed_bus.ts';
export { prefixToken } from './bus/subject.ts';
