/**
 * What the operations on live sessions share (`live.ts`, `setting_groups.ts`): the connection parameter,
 * the HTTP binding and the sentences their descriptions repeat. Not part of the package's entry point.
 */
import { Type } from '@sinclair/typebox';
import type { HttpBinding } from '../operation.ts';
import type { ProblemCode } from '../problems.ts';

const uuid = (description: string) =>
  Type.String({ pattern: '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$', description });

/** The path parameters of an operation on one connection. */
export const connectionParams = Type.Object(
  { connectionId: uuid('Id of a connection of the space (a UUID).') },
  { additionalProperties: false },
);

/** The HTTP binding of a session operation: space-scoped, and a change that leaves the configuration as it was. */
export const binding = (
  method: HttpBinding['method'],
  path: string,
  status: 200 | 204,
  access: 'viewer' | 'editor',
  errors: readonly ProblemCode[] = ['not_found'],
): HttpBinding => ({
  method,
  path,
  status,
  access,
  spaceScoped: true,
  errors,
  // Sessions and devices: nothing here changes the configuration a cached read answers.
  ...(method === 'GET' ? {} : { keepsConfiguration: true as const }),
});

/**
 * The API's requests to one connection's device under way at once on the replica holding it
 * (`DEVICE_REQUESTS_PER_CONNECTION`); one more is 503 `overloaded` at once.
 */
export const deviceRequestsPerConnectionSetting = { name: 'DEVICE_REQUESTS_PER_CONNECTION', fallback: 32, min: 1, max: 10_000 } as const;

/** What the description of a device operation says of a connection that is not connected. */
export const notConnected = `A connection that is not connected now answers 409 \`not_connected\`; one whose site (\`site\`) does not answer the hub now, 503 \`site_unreachable\` with \`Retry-After\` at once (never queued); one with as many requests to its device under way as it takes (\`${deviceRequestsPerConnectionSetting.name}\`, ${deviceRequestsPerConnectionSetting.fallback} by default), 503 \`overloaded\` with \`Retry-After\` at once. A request that waits for a turn on the association longer than \`MMS_QUEUE_WAIT_MS\` is not sent: 504 \`upstream_timeout\`.`;

/** What the description of a device operation says of a refusal. */
export const refused =
  "The device's refusal is 502 `device_refused`: `detail` names the reason and `deviceError` carries it (`{service, error, addCause?}`).";
