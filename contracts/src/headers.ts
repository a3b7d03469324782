/**
 * Header names carried on bus messages between the gateway and the services. On NATS a request carries one
 * header, the context (`context`), and the request id, time left, space, caller, client address and checked
 * schema travel inside it; the receiving service hands its handler the same names as the in-process bus
 * does, taken from the context it verified.
 */
export const busHeaders = {
  requestId: 'x-request-id',
  /** The resolved space of a space-scoped request. */
  space: 'x-space',
  /** JSON of the authenticated caller ({@link Actor}). */
  actor: 'x-actor',
  /** The client address as the gateway established it. */
  clientIp: 'x-client-ip',
  /**
   * The time left for a request, in milliseconds, when it was sent. The receiver counts its own deadline
   * from the moment it receives the message (as gRPC's `grpc-timeout` does), so clocks of different hosts
   * never need to agree; a forwarded request carries what is left of it.
   */
  timeout: 'x-timeout-ms',
  /** `gzip` on a reply whose body is compressed (large answers, so that they fit one bus message). */
  contentEncoding: 'x-content-encoding',
  /** JSON of a reply's fields besides its octets, on the reply of an operation with `replyOctets`. */
  replyFields: 'x-reply-fields',
  /**
   * `1` on a request or reply whose body is a staged reference (`staging.ts`): the message itself was too
   * large for one bus message and waits in parts in the receiving (or answering) service's store.
   */
  staged: 'x-staged',
  /**
   * On NATS, the signed context of a request (platform/src/bus/trust.ts): request id, time left, actor,
   * space and client address travel inside it, bound to the subject and the body. Handed to a handler, it is the
   * context to pass on when calling on the caller's behalf.
   */
  context: 'x-context',
  /**
   * The fingerprint of the request schema a gateway checked the request's message against at its edge
   * (`requestFingerprint` in the platform): the service that serves the request does not check it again.
   * On NATS it travels inside the context, and only a gateway's key may attest it; a context of any other
   * role that claims it is refused.
   */
  checked: 'x-checked',
} as const;

/** The authenticated caller as services see it. */
export type Actor = {
  id: string;
  name: string;
  roles: string[];
  spaces: string[];
  /** The session the request came with: what "the caller's other sessions" are counted from. */
  sid?: string;
};
