import { Type, type Static } from '@sinclair/typebox';
import { defineOperation, requestSchema, type ServiceName } from './operation.ts';

/** The answer of a service's health ping. */
export const PingResponse = Type.Object({
  service: Type.String(),
  version: Type.String(),
  instance: Type.String(),
  store: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
});

/** Every service answers `<context>.v1.ping`: the gateway's readiness check asks each one. */
export function pingOperation(service: ServiceName) {
  return defineOperation({
    operationId: 'ping',
    service,
    summary: `Health of the ${service} service and its store`,
    tags: ['Operations'],
    request: requestSchema({}),
    response: PingResponse,
  });
}

export const authPing = pingOperation('auth');
export const configPing = pingOperation('config');
export const protocolPing = pingOperation('protocol');
export const historyPing = pingOperation('history');

/** The reply of the diagnostic echo. */
export const EchoResponse = Type.Object({
  text: Type.String(),
  space: Type.Union([Type.String(), Type.Null()]),
  requestId: Type.String(),
  service: Type.String(),
  instance: Type.String(),
});

/**
 * A diagnostic round trip through the gateway, the bus and the config service. It shows that a request
 * reaches a service with its request id, and it is the reference route of the benchmarks.
 */
export const echo = defineOperation({
  operationId: 'echo',
  service: 'config',
  summary: 'Echo a text through the gateway, the bus and a service',
  tags: ['Operations'],
  request: requestSchema({
    query: Type.Object({ text: Type.Optional(Type.String({ maxLength: 1000 })) }, { additionalProperties: false }),
  }),
  response: EchoResponse,
  http: { method: 'GET', path: '/api/echo', status: 200, access: 'public', spaceScoped: false },
});

/**
 * Presence: every service replica announces itself on the bus, so any process can tell which replicas
 * are live without asking each service (readiness bodies, the replica gauge of `/metrics`). A replica
 * beats every `intervalMs` and when asked; one not heard for `missedBeats` intervals counts as gone; one
 * that stops says so at once.
 */
export const presence = {
  intervalMs: 1000,
  missedBeats: 3,
  /** Where replicas of a service beat: `platform.presence.<service>`. */
  subject: (service: ServiceName) => `platform.presence.${service}`,
  /** Every service's beats. */
  anySubject: 'platform.presence.*',
  /** Asked by a process that starts listening: every replica beats at once. */
  querySubject: 'platform.presence',
} as const;

/** One replica's beat. */
export const ReplicaBeat = Type.Object({
  service: Type.Union([Type.Literal('auth'), Type.Literal('config'), Type.Literal('protocol'), Type.Literal('history')]),
  instance: Type.String({ maxLength: 100 }),
  version: Type.String({ maxLength: 100 }),
  /** Whether the replica's store answered its last check. */
  store: Type.Union([Type.Literal('ok'), Type.Literal('down')]),
  /** `stopping` once the replica has begun to stop: count it gone. */
  state: Type.Union([Type.Literal('up'), Type.Literal('stopping')]),
});
export type ReplicaBeat = Static<typeof ReplicaBeat>;
