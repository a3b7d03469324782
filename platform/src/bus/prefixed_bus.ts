import type { DurableEvents, DurableEventsOptions } from './durable_events.ts';
import type { EventLog, EventLogOptions } from './event_log.ts';
import type { SpaceVersions } from './space_versions.ts';
import type { SiteStreams } from './site_streams.ts';
import type {
  Bus,
  BusService,
  BusSubscription,
  EndpointSpec,
  EventHandler,
  RequestOptions,
  ServiceSpec,
  BusMessage,
  BusHeaders,
} from './bus.ts';

/**
 * A bus whose subjects all live under a prefix (`<prefix>.config.v1.echo`), so that several platforms
 * (environments, or test runs) can share one NATS server without answering each other's requests.
 * Handlers and subscribers see the subjects without the prefix. `$SRV` discovery is server-wide.
 */
export class PrefixedBus implements Bus {
  readonly kind: Bus['kind'];
  readonly maxPayload: number;
  private readonly inner: Bus;
  private readonly prefix: string;

  constructor(inner: Bus, prefix: string) {
    this.inner = inner;
    this.prefix = prefix;
    this.kind = inner.kind;
    this.maxPayload = inner.maxPayload;
  }

  request(subject: string, data: Uint8Array, options?: RequestOptions): Promise<BusMessage> {
    return this.inner.request(this.wrap(subject), data, options).then((m) => this.unwrapMessage(m));
  }

  publish(subject: string, data: Uint8Array, headers?: BusHeaders): void {
    this.inner.publish(this.wrap(subject), data, headers);
  }

  subscribe(subject: string, handler: EventHandler, options?: { queue?: string }): BusSubscription {
    return this.inner.subscribe(this.wrap(subject), (m) => handler(this.unwrapMessage(m)), options);
  }

  addService(spec: ServiceSpec, endpoints: EndpointSpec[]): Promise<BusService> {
    return this.inner.addService(
      spec,
      endpoints.map((e) => ({ ...e, subject: this.wrap(e.subject), handler: (m) => e.handler(this.unwrapMessage(m)) })),
    );
  }

  flush(): Promise<void> {
    return this.inner.flush();
  }

  isConnected(): boolean {
    return this.inner.isConnected();
  }

  openEventLog(options: EventLogOptions & { prefix?: string }): Promise<EventLog> {
    return this.inner.openEventLog({ ...options, prefix: options.prefix ? `${this.prefix}.${options.prefix}` : this.prefix });
  }

  consumeEvents(options: DurableEventsOptions): Promise<DurableEvents> {
    return this.inner.consumeEvents({ ...options, prefix: options.prefix ? `${this.prefix}.${options.prefix}` : this.prefix });
  }

  ingestHold(): Promise<void> | undefined {
    return this.inner.ingestHold();
  }

  siteStreams(prefix?: string): SiteStreams {
    return this.inner.siteStreams(prefix ? `${this.prefix}.${prefix}` : this.prefix);
  }

  spaceVersions(prefix?: string): SpaceVersions {
    return this.inner.spaceVersions(prefix ? `${this.prefix}.${prefix}` : this.prefix);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private wrap(subject: string): string {
    return subject.startsWith('$SRV.') || subject.startsWith('_INBOX') ? subject : `${this.prefix}.${subject}`;
  }

  private unwrapMessage(m: BusMessage): BusMessage {
    const lead = `${this.prefix}.`;
    return m.subject.startsWith(lead) ? { ...m, subject: m.subject.slice(lead.length) } : m;
  }
}
