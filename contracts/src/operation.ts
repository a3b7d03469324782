import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { ProblemCode } from './problems.ts';

/** The services of the platform, by bounded context. */
export type ServiceName = 'auth' | 'config' | 'protocol' | 'history';

/** Roles in increasing power. */
export type Role = 'viewer' | 'operator' | 'editor' | 'admin';

/** HTTP methods the API uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call an operation through the gateway:
 * `public` needs no session; `user` any signed-in user; `viewer`/`editor`/`admin` at least that role.
 */
export type Access = 'public' | 'user' | Role;

/** How an operation is exposed over HTTP by the gateway. */
export type HttpBinding = {
  method: HttpMethod;
  /** Koa-style path, `:name` for parameters. */
  path: string;
  /** Status of a successful answer. */
  status: 200 | 201 | 204;
  access: Access;
  /** True when the request is bounded by the caller's space (the X-Space rule). */
  spaceScoped: boolean;
  /** Content types accepted for the body; the first is the documented default. */
  consumes?: readonly ('application/json' | 'text/plain' | 'multipart/form-data' | 'application/x-www-form-urlencoded')[];
  /**
   * The reference product wraps some bodies as `{<name>: <entity>, file?: <binary>}` (sent as JSON or as
   * multipart with a JSON part). The gateway accepts that form as well as the bare entity.
   */
  bodyWrapper?: string;
  /**
   * Routes the generic router leaves to a dedicated one: `scl-upload` streams a multipart SCL upload to
   * the service in chunks, `file-download` streams a stored file back, `device-file-download` a file of a
   * connected device's file store.
   */
  gatewayRoute?: 'scl-upload' | 'file-download' | 'device-file-download' | 'history';
  /**
   * The largest body the gateway reads for this operation, in bytes, when it is not the standard 1 MiB
   * (an animation with its 2 MiB SVG). A request larger than one bus message travels staged (`staging.ts`).
   */
  bodyLimitBytes?: number;
  /** The body as a client sends it, when the gateway turns it into another message (uploads). */
  documentedBody?: TSchema;
  /** The media type of a success answer that is not JSON (downloads). */
  produces?: string;
  /** Problem codes the operation documents beyond the ones every route can answer. */
  errors?: readonly ProblemCode[];
  /**
   * A GET whose answer is configuration of the space, which only the space's writes change: the gateway
   * may answer it from its read cache (and answers it with an `ETag`). Never set on what a device or a
   * clock changes (statuses, values, sessions).
   */
  cacheable?: true;
  /**
   * A change that leaves every cacheable read of its space as it was: a device's values, controls and
   * report subscriptions, a session's start and stop. It bumps no space version, so it neither empties
   * the read caches nor waits for the bump; every other change does both.
   */
  keepsConfiguration?: true;
  /**
   * Open to a user who must choose a new password first (`requirePasswordReset`: their password was set by
   * someone else): their own password change and the reads of their own profile. Every other operation
   * that needs a session answers them 403 `password_change_required` until they have changed it.
   */
  beforePasswordChange?: true;
  /**
   * A read whose query may ask `format=csv`: the service then answers the CSV text as a JSON string, which
   * the gateway sends as `text/csv` (the alarm journal).
   */
  csvFormat?: true;
};

/**
 * One operation of the platform: the bus subject that serves it, the message schemas in both directions,
 * and optionally its HTTP binding. The request message is `{params, query, body}` so that the gateway and
 * the OpenAPI document take each part from the same schema the service validates with.
 */
export type Operation<Req extends TObject = TObject, Res extends TSchema = TSchema> = {
  operationId: string;
  service: ServiceName;
  subject: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  request: Req;
  response: Res;
  http?: HttpBinding;
  /**
   * How long a caller waits for the answer, from the gateway's receipt of the request to its reply; the
   * time travels with the request, so a service skips work nobody waits for any more. Absent: the
   * standard deadline (`BUS_TIMEOUT_MS`, 5 s by default).
   */
  deadlineMs?: number;
  /**
   * The reply carries octets (a file's content): its `data` field, a `Uint8Array`, travels as the bus
   * message's body as it is, and its other fields as JSON in the `x-reply-fields` header, so that no octet
   * is base64'd, put in JSON and parsed back on its way. Only for operations without an HTTP binding.
   */
  replyOctets?: true;
};

/**
 * Deadlines of operations that outlast the standard one. A device operation may wait for one MMS request
 * (`MMS_REQUEST_TIMEOUT_MS`, at most 10 s by default), a control also for its select and for the device's
 * CommandTermination (`CONTROL_TERMINATION_TIMEOUT_MS`); the protocol service refuses settings that do not
 * fit in this deadline.
 */
export const deadlines = {
  /** Operations answered by a live device (read, write, control, report blocks, device browse). */
  deviceMs: 30_000,
  /** The standard deadline when `BUS_TIMEOUT_MS` is not set: every other operation, and the stores' own checks. */
  standardMs: 5_000,
} as const;

/** How long a caller waits for an operation: its own deadline, or the standard one the process was given. */
export function deadlineOf(op: Pick<Operation, 'deadlineMs'>, standardMs: number): number {
  return op.deadlineMs ?? standardMs;
}

/** Request message type of an operation. */
export type RequestOf<O extends Operation> = Static<O['request']>;
/** Reply message type of an operation. */
export type ResponseOf<O extends Operation> = Static<O['response']>;

/** The subject of an operation: `<context>.v<major>.<operation>`. */
export function subjectOf(service: ServiceName, operationId: string, major = 1): string {
  return `${service}.v${major}.${operationId}`;
}

/** Declares an operation; the subject follows the naming rule of the contract. */
export function defineOperation<Req extends TObject, Res extends TSchema>(
  spec: Omit<Operation<Req, Res>, 'subject'> & { major?: number },
): Operation<Req, Res> {
  const { major, ...rest } = spec;
  return { ...rest, subject: subjectOf(spec.service, spec.operationId, major ?? 1) };
}

/** Builds the request schema of an operation from its parts; absent parts are empty objects. */
export function requestSchema<
  P extends TObject = TObject<{}>,
  Q extends TObject = TObject<{}>,
  B extends TSchema | undefined = undefined,
>(parts: { params?: P; query?: Q; body?: B }): TObject<{ params: P; query: Q } & (B extends TSchema ? { body: B } : {})> {
  const properties: Record<string, TSchema> = {
    params: parts.params ?? Type.Object({}, { additionalProperties: false }),
    query: parts.query ?? Type.Object({}, { additionalProperties: false }),
  };
  if (parts.body) properties.body = parts.body;
  return Type.Object(properties, { additionalProperties: false }) as never;
}

/** A reply with no content (HTTP 204). */
export const NoContent = Type.Null();
