import { headers as natsHeaders, InvalidArgumentError, type MsgHdrs, type NatsConnection } from '@nats-io/nats-core';
import { Svcm, type Service, type ServiceMsg } from '@nats-io/services';
import type { Logger } from 'pino';
import type { BusHeaders, BusMessage, BusReply, BusService, EndpointSpec, ServiceSpec } from './bus.ts';
import { failureReply, oneLine, tooLargeInPlaceOf, tooLargeReply } from './micro.ts';

/** The slice of the services library's per-endpoint statistics this module corrects. */
type LibraryStats = {
  num_requests: number;
  processing_time: number;
  average_processing_time: number;
  countError(err: Error): void;
};

/**
 * Registers a service with the NATS micro-service library (`$SRV.PING|INFO|STATS` come with it) and
 * serves its endpoints with async handlers. The library's own handler wrapper only sees synchronous
 * throws, so each request is awaited here: a thrown error becomes a 500 service error, and the request
 * is tracked until its reply is sent, so `stop()` can wait for it.
 */
export async function addNatsService(nc: NatsConnection, spec: ServiceSpec, endpoints: EndpointSpec[], log?: Logger): Promise<BusService> {
  // Fresh objects: the library freezes and keeps the metadata it is given.
  const service = await new Svcm(nc).add({
    name: spec.name,
    version: spec.version,
    description: spec.description ?? '',
    queue: spec.queue ?? 'q',
    metadata: { ...spec.metadata },
  });
  const inFlight = new Set<Promise<void>>();
  try {
    for (const endpoint of endpoints) {
      let stats: LibraryStats | undefined;
      service.addEndpoint(endpoint.name, {
        subject: endpoint.subject,
        metadata: { ...endpoint.metadata },
        handler: (err, msg) => {
          // An error here means the subscription failed; the library stops the service itself.
          if (err) return;
          const work = serveOne(endpoint, msg, stats, log).catch((error: unknown) =>
            log?.error({ err: error }, 'serving a request failed'),
          );
          inFlight.add(work);
          void work.finally(() => inFlight.delete(work));
        },
      });
      stats = libraryStats(service, endpoint.name);
    }
    await nc.flush();
  } catch (err) {
    await service.stop();
    throw err;
  }
  return {
    id: service.info().id,
    stop: async () => {
      // Drains the service's subscriptions: the server sends no more requests, those already
      // delivered are dispatched; then every handler in flight gets to send its reply.
      await service.stop();
      await Promise.allSettled([...inFlight]);
    },
  };
}

async function serveOne(endpoint: EndpointSpec, msg: ServiceMsg, stats: LibraryStats | undefined, log?: Logger): Promise<void> {
  const started = process.hrtime.bigint();
  let reply: BusReply;
  try {
    reply = await endpoint.handler(toBusMessage(msg));
  } catch (err) {
    log?.error({ err, subject: msg.subject, endpoint: endpoint.name }, 'endpoint handler failed');
    reply = failureReply(err);
  }
  const error = respond(msg, reply, log);
  if (stats) record(stats, Number(process.hrtime.bigint() - started), error);
}

/** Sends the reply; returns the error description when it went out as a service error. */
function respond(msg: ServiceMsg, reply: BusReply, log?: Logger): string | undefined {
  try {
    send(msg, reply);
    return reply.error?.description;
  } catch (err) {
    if (!isPayloadError(err)) {
      log?.warn({ err, subject: msg.subject }, 'could not send a reply');
      return (err as Error).message;
    }
    // The client refuses a reply over max_payload; the requester would time out. Say so instead.
    try {
      send(msg, tooLargeInPlaceOf(reply));
    } catch (again) {
      log?.warn({ err: again, subject: msg.subject }, 'could not send a reply');
    }
    return tooLargeReply.error?.description;
  }
}

function send(msg: ServiceMsg, reply: BusReply): void {
  const headers = toNatsHeaders(reply.headers);
  if (reply.error) {
    // respondError adds the Nats-Service-Error pair to the headers it is given and keeps the others.
    msg.respondError(reply.error.code, oneLine(reply.error.description), reply.data, { headers: headers ?? natsHeaders() });
  } else {
    msg.respond(reply.data, { headers });
  }
}

/**
 * The library counts a request and its time when its wrapper returns, which for an async handler is as
 * soon as the work starts, and counts only synchronous throws as errors. Completes the picture, so that
 * `$SRV.STATS` reports what the in-process bus reports: the full processing time and the service errors.
 */
function record(stats: LibraryStats, nanos: number, error: string | undefined): void {
  stats.processing_time += nanos;
  stats.average_processing_time = Math.round(stats.processing_time / Math.max(1, stats.num_requests));
  if (error !== undefined) stats.countError(new Error(error));
}

/**
 * The statistics the library keeps for the endpoint just added (the last of its handlers). Not public
 * API: when its shape changes this gives undefined, and the statistics stay the library's own.
 */
function libraryStats(service: Service, name: string): LibraryStats | undefined {
  const handlers = (service as unknown as { handlers?: { name?: string; stats?: Partial<LibraryStats> }[] }).handlers;
  const last = handlers?.at(-1);
  const stats = last?.name === name ? last.stats : undefined;
  const usable =
    typeof stats?.countError === 'function' && typeof stats.processing_time === 'number' && typeof stats.num_requests === 'number';
  return usable ? (stats as LibraryStats) : undefined;
}

/** True for the client's refusal of a message over the server's max_payload. */
export function isPayloadError(err: unknown): boolean {
  return err instanceof InvalidArgumentError && /max_payload/.test(err.message);
}

/** NATS headers from a plain record; undefined when there are none, so no header block is sent. */
export function toNatsHeaders(record: BusHeaders | undefined): MsgHdrs | undefined {
  const entries = Object.entries(record ?? {});
  if (entries.length === 0) return undefined;
  const h = natsHeaders();
  for (const [name, value] of entries) h.set(name, value);
  return h;
}

/**
 * A bus message from a NATS message: headers as a plain record, names exactly as received; `subject` in
 * place of the message's own (a reply is named by its request's subject, not its inbox's).
 */
export function toBusMessage(msg: { subject: string; data: Uint8Array; headers?: MsgHdrs }, subject = msg.subject): BusMessage {
  const headers: BusHeaders = {};
  if (msg.headers)
    for (const [name, values] of msg.headers) headers[name] = values.length === 1 ? (values[0] as string) : values.join(', ');
  return { subject, data: msg.data, headers };
}
