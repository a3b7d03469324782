/** Header names carried on bus messages between the gateway and the services. */
export const busHeaders = {
  requestId: 'x-request-id',
  /** The resolved space of a space-scoped request. */
  space: 'x-space',
  /** JSON of the authenticated caller ({@link Actor}). */
  actor: 'x-actor',
  /** The client address as the gateway established it. */
  clientIp: 'x-client-ip',
  /** `gzip` on a reply whose body is compressed (large answers, so that they fit one bus message). */
  contentEncoding: 'x-content-encoding',
} as const;

/** The authenticated caller as services see it. */
export type Actor = {
  id: string;
  name: string;
  roles: string[];
  spaces: string[];
};
