import { randomUUID } from 'node:crypto';
import { busHeaders, mayCall, operations, problemBody, type Operation } from '@scada/contracts';
import type { Logger } from 'pino';
import type { BusRole, BusTrust } from './bus_keys.ts';
import { ContextSigner, ContextVerifier, type Refusal } from './trust.ts';
import type { DurableEvents, DurableEventsOptions } from './durable_events.ts';
import type { EventLog, EventLogOptions } from './event_log.ts';
import type { SpaceVersions } from './space_versions.ts';
import type { SiteStreams } from './site_streams.ts';
import type {
  Bus,
  BusHeaders,
  BusMessage,
  BusReply,
  BusService,
  BusSubscription,
  EndpointSpec,
  EventHandler,
  RequestOptions,
  ServiceSpec,
} from './bus.ts';

const encoder = new TextEncoder();

/** The headers whose values travel inside the context and not beside it (`busHeaders.context` is made anew). */
const inContext = new Set<string>([
  busHeaders.requestId,
  busHeaders.timeout,
  busHeaders.actor,
  busHeaders.space,
  busHeaders.clientIp,
  busHeaders.checked,
  busHeaders.context,
]);

/**
 * A bus that signs every request it sends and verifies every request its services receive (`trust.ts`).
 * It sits directly on the transport, under any subject prefix, so a context names the subject as it
 * travels. Publications and subscriptions pass through: who may publish an event is NATS's to say.
 */
export class SignedBus implements Bus {
  readonly kind: Bus['kind'];
  readonly maxPayload: number;
  readonly #inner: Bus;
  readonly #signer: ContextSigner;
  readonly #verifier: ContextVerifier;
  readonly #log: Logger;

  constructor(inner: Bus, trust: BusTrust, log: Logger) {
    this.#inner = inner;
    this.kind = inner.kind;
    this.maxPayload = inner.maxPayload;
    this.#signer = new ContextSigner(trust);
    this.#verifier = new ContextVerifier(trust);
    this.#log = log;
  }

  async request(subject: string, data: Uint8Array, options?: RequestOptions): Promise<BusMessage> {
    const given = options?.headers ?? {};
    const context = this.#signer.sign(
      subject,
      data,
      given[busHeaders.requestId] === undefined ? { ...given, [busHeaders.requestId]: randomUUID() } : given,
    );
    // What the context carries travels in it alone: one NATS header a request (each header is parsed,
    // checked and written out by the client on both sides), and nothing beside the context to disagree with
    // it. A fresh object rather than `delete`s, which would leave it in V8's slow dictionary mode.
    const headers: BusHeaders = {};
    for (const name in given) if (!inContext.has(name)) headers[name] = given[name] as string;
    headers[busHeaders.context] = context;
    return this.#inner.request(subject, data, { timeoutMs: options?.timeoutMs, headers });
  }

  publish(subject: string, data: Uint8Array, headers?: BusHeaders): void {
    this.#inner.publish(subject, data, headers);
  }

  subscribe(subject: string, handler: EventHandler, options?: { queue?: string }): BusSubscription {
    return this.#inner.subscribe(subject, handler, options);
  }

  addService(spec: ServiceSpec, endpoints: EndpointSpec[]): Promise<BusService> {
    return this.#inner.addService(
      spec,
      endpoints.map((e) => {
        const op = e.metadata?.operationId ? operations.find((o) => o.operationId === e.metadata?.operationId) : undefined;
        return { ...e, handler: (m: BusMessage) => this.#verified(m, e, op) };
      }),
    );
  }

  async #verified(msg: BusMessage, endpoint: EndpointSpec, op: Operation | undefined): Promise<BusReply> {
    // A message the endpoint did not get from its own subject (a JetStream delivery, say) is no request.
    const verdict: { headers: BusHeaders; roles: readonly BusRole[] } | Refusal =
      msg.subject !== endpoint.subject ? { reason: `it came on ${msg.subject}, not the endpoint's subject` } : this.#verifier.verify(msg);
    const refusal =
      'reason' in verdict
        ? verdict.reason
        : op && !verdict.roles.some((role) => mayCall(role, op))
          ? `a ${verdict.roles.join('/')} key may not ask for ${op.operationId}`
          : null;
    if (refusal === null && 'headers' in verdict) return endpoint.handler({ ...msg, headers: verdict.headers });
    const reqId = 'headers' in verdict ? verdict.headers[busHeaders.requestId] : msg.headers[busHeaders.requestId];
    this.#log.warn({ subject: msg.subject, reqId, reason: refusal }, 'bus request refused');
    const body = problemBody('unauthenticated', 'The request carries no valid signed context');
    return { data: encoder.encode(JSON.stringify(body)), error: { code: 401, description: 'unauthenticated' } };
  }

  flush(): Promise<void> {
    return this.#inner.flush();
  }

  isConnected(): boolean {
    return this.#inner.isConnected();
  }

  openEventLog(options: EventLogOptions & { prefix?: string }): Promise<EventLog> {
    return this.#inner.openEventLog(options);
  }

  consumeEvents(options: DurableEventsOptions): Promise<DurableEvents> {
    return this.#inner.consumeEvents(options);
  }

  ingestHold(): Promise<void> | undefined {
    return this.#inner.ingestHold();
  }

  siteStreams(prefix?: string): SiteStreams {
    return this.#inner.siteStreams(prefix);
  }

  spaceVersions(prefix?: string): SpaceVersions {
    return this.#inner.spaceVersions(prefix);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
