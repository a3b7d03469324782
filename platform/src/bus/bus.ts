import type { DurableEvents, DurableEventsOptions } from './durable_events.ts';
import type { EventLog, EventLogOptions } from './event_log.ts';
import type { SiteStreams } from './site_streams.ts';
import type { SpaceVersions } from './space_versions.ts';

/**
 * The bus: how the gateway and the services talk. One interface, two real implementations: NATS
 * (`nats_bus.ts`) for deployments and an in-process bus (`memory_bus.ts`) for one machine. Both give the
 * same semantics: request/reply with timeouts and no-responder errors, headers, publish/subscribe with
 * wildcards, queue groups that share load, and services discoverable through `$SRV.PING|INFO|STATS`.
 */

/**
 * Message headers, one string value each. Names travel exactly as written: the platform's own are
 * lower-case, the service error pair is `Nats-Service-Error` and `Nats-Service-Error-Code`.
 */
export type BusHeaders = Record<string, string>;

/** A message as a handler or a requester receives it. */
export type BusMessage = {
  subject: string;
  data: Uint8Array;
  headers: BusHeaders;
};

/** What a service endpoint answers. An `error` makes it a service error reply (`Nats-Service-Error*`). */
export type BusReply = {
  data: Uint8Array;
  headers?: BusHeaders;
  error?: { code: number; description: string };
};

/** Serves one endpoint's requests; a thrown error becomes a 500 service error reply. */
export type EndpointHandler = (msg: BusMessage) => Promise<BusReply>;

/** Receives published messages. */
export type EventHandler = (msg: BusMessage) => void | Promise<void>;

/** One endpoint of a service. `name` is a single subject token; `subject` may be any subject. */
export type EndpointSpec = {
  name: string;
  subject: string;
  handler: EndpointHandler;
  metadata?: Record<string, string>;
};

/** A service as registered with the micro-service protocol. */
export type ServiceSpec = {
  name: string;
  version: string;
  description?: string;
  /** Queue group shared by the replicas; defaults to `q` as in the NATS micro-service protocol. */
  queue?: string;
  metadata?: Record<string, string>;
};

/** A running service registration. */
export interface BusService {
  readonly id: string;
  /** Stops taking requests, then waits for the handlers in flight to finish. */
  stop(): Promise<void>;
}

/** A subscription to published messages. */
export interface BusSubscription {
  unsubscribe(): Promise<void>;
}

/** Header names of service error replies, as the NATS micro-service protocol defines them. */
export const serviceErrorHeader = 'Nats-Service-Error';
export const serviceErrorCodeHeader = 'Nats-Service-Error-Code';

/** Why a request did not get an answer. */
export type BusErrorCode = 'invalid_subject' | 'no_responders' | 'timeout' | 'closed' | 'disconnected' | 'payload_too_large';

/** A transport failure of a request (as opposed to a service's own error reply). */
export class BusError extends Error {
  readonly code: BusErrorCode;
  constructor(code: BusErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BusError';
    this.code = code;
  }
}

/** Options of one request. */
export type RequestOptions = { timeoutMs?: number; headers?: BusHeaders };

/** The bus interface every part of the platform is written against. */
export interface Bus {
  readonly kind: 'nats' | 'memory';
  /**
   * Sends a request and waits for the first reply, whose `subject` is the request's. Rejects with
   * {@link BusError} on transport failures; a service error reply resolves, with its headers.
   */
  request(subject: string, data: Uint8Array, options?: RequestOptions): Promise<BusMessage>;
  /** Publishes a message to every subscriber (one per queue group). */
  publish(subject: string, data: Uint8Array, headers?: BusHeaders): void;
  /** Subscribes to a subject, `*` and `>` wildcards allowed. */
  subscribe(subject: string, handler: EventHandler, options?: { queue?: string }): BusSubscription;
  /** Registers a service with its endpoints, in a queue group, discoverable through `$SRV`. */
  addService(spec: ServiceSpec, endpoints: EndpointSpec[]): Promise<BusService>;
  /** Resolves when everything sent so far has reached the server. */
  flush(): Promise<void>;
  /** True while the bus can carry messages. */
  isConnected(): boolean;
  /** The largest payload the bus carries in one message. */
  readonly maxPayload: number;
  /**
   * Opens this process's view of the event log (`events.>`, numbered the same for every process on the
   * bus). `prefix` is the subject prefix the log lives under; a `PrefixedBus` passes its own.
   */
  openEventLog(options: EventLogOptions & { prefix?: string }): Promise<EventLog>;
  /**
   * Follows events of some subjects under a durable name (`durable_events.ts`): each is handed to
   * `options.handle` until a batch holding it was handled; `prefix` as for the event log.
   */
  consumeEvents(options: DurableEventsOptions): Promise<DurableEvents>;
  /**
   * On the in-process bus, while one of its durable consumers has fallen far behind (`holdMarks` in
   * `durable_events.ts`): a promise that resolves once it has caught up, which publishers that can wait
   * (a device session stops reading its socket) wait for. Undefined when nothing is held back, and always
   * on NATS, whose event stream holds what a consumer has not taken yet.
   */
  ingestHold(): Promise<void> | undefined;
  /**
   * This process's versions of spaces (`space_versions.ts`), one object per prefix for the life of the
   * bus; `prefix` as for the event log.
   */
  spaceVersions(prefix?: string): SpaceVersions;
  /** The event stream across sites (`site_streams.ts`): a site's own, and the hub's sources; `prefix` as for the event log. */
  siteStreams(prefix?: string): SiteStreams;
  /** Drains subscriptions and closes the connection. */
  close(): Promise<void>;
}
