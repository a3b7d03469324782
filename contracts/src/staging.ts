import { Type, type Static } from '@sinclair/typebox';
import { defineOperation, requestSchema, type Operation, type ServiceName } from './operation.ts';

/*
 * Messages larger than one bus message (NATS carries 1 MiB by default): the sender stages the message in
 * parts in the receiving service's store, then sends a reference to it, which the bus signs as it signs any
 * body. A request the gateway sends (an animation's 2 MiB SVG) is staged through the service's
 * `stage…MessagePart` operation and taken whole by the service when the reference arrives; a reply a
 * service answers is staged by the service itself and read back part by part through `read…MessagePart`.
 * Parts are kept per space, checked against the reference's size and SHA-256, and dropped once used, or
 * after `stagedMessageTtlSeconds` when nobody used them.
 */

/** Bytes of one staged part, before base64: well under one bus message. */
export const stagedPartBytes = 256 * 1024;

/** Most parts of one staged message (64 MiB): a guard, not a limit any operation meets. */
export const maxStagedParts = 256;

/** Seconds a staged message nobody took is kept. */
export const stagedMessageTtlSeconds = 600;

/** Bytes a message's reference and headers may take beside a body within one bus message. */
export const busEnvelopeBytes = 64 * 1024;

const Id = Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' });

/** The reference a bus message carries in place of a staged body (header `x-staged: 1`). */
export const StagedReference = Type.Object(
  {
    id: Id,
    parts: Type.Integer({ minimum: 1, maximum: maxStagedParts }),
    bytes: Type.Integer({ minimum: 0, maximum: maxStagedParts * stagedPartBytes }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  },
  { additionalProperties: false },
);
export type StagedReference = Static<typeof StagedReference>;

const partRequest = (data: boolean) =>
  requestSchema({
    body: Type.Object(
      {
        id: Id,
        index: Type.Integer({ minimum: 0, maximum: maxStagedParts - 1 }),
        ...(data ? { data: Type.String({ maxLength: Math.ceil(stagedPartBytes / 3) * 4 }) } : { parts: Type.Integer({ minimum: 1 }) }),
      },
      { additionalProperties: false },
    ),
  });

/** The two staging operations of a service: staging a part of a request, reading a part of a reply. */
function stagingOf(service: ServiceName, stem: string): { stage: Operation; read: Operation } {
  return {
    stage: defineOperation({
      operationId: `stage${stem}MessagePart`,
      service,
      summary: 'Stage a part of a request larger than one bus message',
      tags: ['Internal'],
      request: partRequest(true),
      response: Type.Null(),
    }),
    read: defineOperation({
      operationId: `read${stem}MessagePart`,
      service,
      summary: 'Read a part of a reply larger than one bus message (the last read drops the reply)',
      tags: ['Internal'],
      request: partRequest(false),
      response: Type.Object({ data: Type.String() }, { additionalProperties: false }),
    }),
  };
}

/** The services that take and give messages larger than one bus message, with their staging operations. */
export const stagingOperations: Partial<Record<ServiceName, { stage: Operation; read: Operation }>> = {
  config: stagingOf('config', 'Config'),
};

/** Every staging operation, for the registry. */
export const allStagingOperations: Operation[] = Object.values(stagingOperations).flatMap((s) => (s ? [s.stage, s.read] : []));
