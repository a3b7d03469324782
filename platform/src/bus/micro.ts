import { randomUUID } from 'node:crypto';
import { busHeaders } from '@scada/contracts';
import { serviceErrorCodeHeader, serviceErrorHeader, type BusHeaders, type BusReply, type EndpointSpec, type ServiceSpec } from './bus.ts';
import { isValidPattern } from './subject.ts';

/** Statistics of one endpoint, kept as the NATS micro-service protocol reports them. */
export type EndpointCounters = {
  name: string;
  subject: string;
  queue_group: string;
  num_requests: number;
  num_errors: number;
  /** Absent until the first error, as the NATS client reports it. */
  last_error?: string;
  processing_time: number;
  average_processing_time: number;
};

/**
 * The `$SRV` discovery documents of a service registered on the in-process bus, in the shapes of the
 * NATS micro-service protocol (`io.nats.micro.v1.*`), so tools and tests read both buses alike.
 */
export class MicroDescriptor {
  readonly id = randomUUID().replaceAll('-', '').slice(0, 22);
  readonly started = new Date().toISOString();
  readonly counters: EndpointCounters[];
  private readonly spec: ServiceSpec;
  private readonly endpoints: EndpointSpec[];

  constructor(spec: ServiceSpec, endpoints: EndpointSpec[]) {
    checkName('service', spec.name);
    // As loose as the NATS client's own check, so both buses accept the same versions.
    if (!/\d+\.\d+\.\d+/.test(spec.version)) throw new Error(`invalid service version "${spec.version}": not semver`);
    if (spec.queue) checkName('queue', spec.queue);
    for (const e of endpoints) {
      checkName('endpoint', e.name);
      if (!isValidPattern(e.subject)) throw new Error(`invalid endpoint subject "${e.subject}"`);
    }
    this.spec = spec;
    this.endpoints = endpoints;
    this.counters = endpoints.map((e) => ({
      name: e.name,
      subject: e.subject,
      queue_group: spec.queue ?? 'q',
      num_requests: 0,
      num_errors: 0,
      processing_time: 0,
      average_processing_time: 0,
    }));
  }

  /** Records one handled request. */
  record(index: number, nanos: number, error?: string): void {
    const c = this.counters[index]!;
    c.num_requests++;
    c.processing_time += nanos;
    c.average_processing_time = Math.round(c.processing_time / c.num_requests);
    if (error !== undefined) {
      c.num_errors++;
      c.last_error = error;
    }
  }

  private identity(type: string) {
    return { type, name: this.spec.name, id: this.id, version: this.spec.version, metadata: this.spec.metadata ?? {} };
  }

  ping() {
    return this.identity('io.nats.micro.v1.ping_response');
  }

  info() {
    return {
      ...this.identity('io.nats.micro.v1.info_response'),
      description: this.spec.description ?? '',
      endpoints: this.endpoints.map((e) => ({
        name: e.name,
        subject: e.subject,
        queue_group: this.spec.queue ?? 'q',
        metadata: e.metadata ?? {},
      })),
    };
  }

  stats() {
    return { ...this.identity('io.nats.micro.v1.stats_response'), started: this.started, endpoints: this.counters };
  }

  /** The discovery subjects this service answers. */
  discoverySubjects(): { subject: string; verb: 'PING' | 'INFO' | 'STATS' }[] {
    const verbs = ['PING', 'INFO', 'STATS'] as const;
    return verbs.flatMap((verb) => [
      { subject: `$SRV.${verb}`, verb },
      { subject: `$SRV.${verb}.${this.spec.name}`, verb },
      { subject: `$SRV.${verb}.${this.spec.name}.${this.id}`, verb },
    ]);
  }
}

/** Refuses names the NATS services library refuses: service, endpoint and queue names are `[-\w]+`. */
function checkName(context: string, name: string): void {
  if (!/^[-\w]+$/.test(name)) throw new Error(`invalid ${context} name "${name}"`);
}

/** The reply to a request whose handler threw: a bare 500 service error carrying the error's message. */
export function failureReply(err: unknown): BusReply {
  const description = err instanceof Error && err.message ? err.message : 'handler failed';
  return { data: new Uint8Array(), error: { code: 500, description } };
}

/** The description of a service error as a header can carry it: one line (NATS refuses CR and LF). */
export function oneLine(description: string): string {
  return description.replace(/[\r\n]+/g, ' ');
}

/** The headers of a reply: its own, plus the `Nats-Service-Error*` pair when it is a service error. */
export function replyHeaders(reply: BusReply): BusHeaders {
  const headers: BusHeaders = { ...reply.headers };
  if (reply.error) {
    headers[serviceErrorHeader] = oneLine(reply.error.description);
    headers[serviceErrorCodeHeader] = String(reply.error.code);
  }
  return headers;
}

/**
 * What a service answers when its reply would exceed the bus payload limit even compressed (NATS would
 * not send it): a problem body the caller turns into 413 `payload_too_large`, not a bare failure.
 */
export const tooLargeReply: BusReply = {
  data: new TextEncoder().encode(
    JSON.stringify({
      type: 'urn:scada:problem:payload_too_large',
      title: 'Payload too large',
      status: 413,
      detail: 'The answer is larger than one bus message carries; ask for less of it',
      code: 'payload_too_large',
    }),
  ),
  error: { code: 413, description: 'payload_too_large' },
};

/**
 * The too-large answer in place of a reply: the reply's own headers kept, but not the one that says its
 * body is compressed (the problem body is not), so the caller reads 413 and not a body that does not expand.
 */
export function tooLargeInPlaceOf(reply: BusReply): BusReply {
  if (!reply.headers) return tooLargeReply;
  const { [busHeaders.contentEncoding]: _compressed, ...headers } = reply.headers;
  return { ...tooLargeReply, headers };
}
