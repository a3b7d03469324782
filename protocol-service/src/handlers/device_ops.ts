/**
 * The operations on a live device: read (values and data sets), write, control, browse, report blocks and
 * the last reported values. A request may arrive at any replica (the queue group picks one); the device
 * router runs it here when this replica holds the connection and forwards it to the holder's own subject
 * (`<subject>.at.<instance>`) otherwise, so the device only ever hears one association. Every write and
 * control is kept in the control log by the replica the request reached, with its outcome.
 */
import {
  browseConnectionDevice,
  disableConnectionReport,
  enableConnectionReport,
  getConnectionValues,
  operateConnectionControl,
  ProblemError,
  protocolEvents,
  readConnectionValues,
  writeConnectionValue,
  type Operation,
  type ReadValue,
} from '@scada/contracts';
import {
  call,
  checkDeadline,
  implement,
  onBehalfOf,
  publishEvent,
  remainingMs,
  spaceOf,
  type Bus,
  type HandlerContext,
  type Implementation,
  type Store,
} from '@scada/platform';
import { connectionNotFound, notConnected, type DeviceRouter } from '../sessions/device_router.ts';
import type { DeviceValue, LiveDevice } from '../sessions/live_device.ts';
import { blockKey, type ObservedValue, type Session } from '../sessions/session.ts';
import { qualityOf, readTimestampOf } from '../sessions/value_stamps.ts';
import { appendControlLog, type ControlLogRecord } from '../store/control_log.ts';
import { findConnection } from '../store/connections.ts';
import { forgetDeliveries } from '../store/deliveries.ts';
import { subscribeReport, unsubscribeReport } from '../store/sessions.ts';
import { nobodyThere, siteUnreachable } from '../sites/hub.ts';
import { atSite } from '../sites/site.ts';

export type DeviceOpsDeps = { store: Store; bus: Bus; router: DeviceRouter };

/** The operation as the holding replica serves it on its own subject. */
export function atInstance<O extends Operation>(op: O, instance: string): O {
  return { ...op, subject: `${op.subject}.at.${instance}` };
}

/**
 * Forwards a request for a device of a site to the site's protocol service: refused at once with 503
 * `site_unreachable` while the site does not answer the hub's pings, or when nobody there takes it; never
 * kept to be sent later.
 */
export async function viaSite<T>(deps: DeviceOpsDeps, op: Operation, site: string, request: unknown, ctx: HandlerContext): Promise<T> {
  if (!deps.router.reachable(site)) throw siteUnreachable(site);
  try {
    return (await call(deps.bus, atSite(op, site), request as never, onBehalfOf(ctx))) as T;
  } catch (err) {
    if (nobodyThere(err)) {
      deps.router.lost(site);
      throw siteUnreachable(site);
    }
    throw err;
  }
}

/** Margin kept from a request's deadline for the answer's way back to the caller. */
const answerMarginMs = 250;

/** A CommandTermination is waited for at most this long, however long the caller would wait. */
const terminationWaitMs = 10_000;

/** How long a control may wait for the device's CommandTermination: what the caller still waits, less the margin. */
function controlTimeoutMs(ctx: HandlerContext): number {
  return Number.isFinite(ctx.deadline) ? Math.max(1, Math.min(terminationWaitMs, remainingMs(ctx) - answerMarginMs)) : terminationWaitMs;
}

/**
 * One value read as the API answers it: the value with its data object's quality and time where the same
 * read carried them (a read has no TimeOfEntry), or the reason it could not be read.
 */
function readResult(reference: string, read: DeviceValue | { error: string } | undefined) {
  if (read === undefined || 'error' in read) return { reference, error: read?.error ?? 'not read' };
  return { reference, value: read.value, quality: qualityOf(read.quality), ...readTimestampOf(read.timestamp) };
}

/**
 * Publishes what a read answered (`protocol.read`), so values read on request are kept in the
 * history beside the reported ones; by the replica that asked the device, once.
 */
function publishRead(
  bus: Bus,
  space: string,
  connectionId: string,
  answer: ReturnType<typeof readResult>[] | unknown[],
  requestId: string,
): void {
  const receivedAt = new Date().toISOString();
  const read = (r: unknown): r is Omit<ReadValue, 'connectionId' | 'receivedAt'> =>
    typeof r === 'object' && r !== null && 'value' in r && !('error' in r);
  const values = answer
    .flatMap((r) => (typeof r === 'object' && r !== null && 'members' in r ? (r as { members: unknown[] }).members : [r]))
    .filter(read)
    .map((r) => ({ connectionId, reference: r.reference, value: r.value, quality: r.quality, timestamp: r.timestamp, receivedAt }));
  if (values.length === 0) return;
  try {
    publishEvent(bus, protocolEvents.read, { space, connectionId, values }, { requestId });
  } catch {
    // A bus that is closing: the answer still goes to the caller.
  }
}

/** A failure that is not already a problem (a device stand-in in a test, a bug) is the device's failure. */
function asDeviceProblem(err: unknown): ProblemError {
  return err instanceof ProblemError
    ? err
    : new ProblemError('bad_gateway', `The device failed: ${(err as Error).message}`, { cause: err });
}

/** What a control log row says of a request: from its answer when it succeeded, else from the problem it failed with. */
export type LoggedChange<T> = (
  answer: T | undefined,
  problem: ProblemError | null,
) => Pick<ControlLogRecord, 'action' | 'reference' | 'value'>;

/**
 * Runs a change of a device and keeps it in the control log of connection `id` with its outcome, whatever
 * that is: the status `okStatus` or the problem it failed with, and the device's reason. The answer waits
 * for the entry to be kept, unless `answerFirst`: then a success is answered at once and its entry kept
 * meanwhile (a file download, whose headers and first octets would otherwise wait for the store while the
 * device's answers wait in the socket); a refusal still waits for its entry.
 */
export async function withControlLog<T>(
  store: Store,
  ctx: HandlerContext,
  id: string,
  okStatus: number,
  describe: LoggedChange<T>,
  run: () => Promise<T>,
  answerFirst = false,
): Promise<T> {
  let problem: ProblemError | null = null;
  let answer: T | undefined;
  const keep = () => {
    const deviceError = (problem?.extensions.deviceError as ControlLogRecord['deviceError'] | undefined) ?? null;
    return appendControlLog(store, spaceOf(ctx), id.toLowerCase(), {
      userId: ctx.actor?.id ?? null,
      username: ctx.actor?.name ?? null,
      ...describe(answer, problem),
      outcome: problem ? problem.code : 'ok',
      status: problem ? problem.status : okStatus,
      deviceError,
      detail: problem?.expose ? problem.detail : null,
    }).catch((err: unknown) => ctx.log.error({ err }, 'a control log entry was not kept'));
  };
  try {
    answer = await run();
  } catch (err) {
    problem = asDeviceProblem(err);
    await keep();
    throw problem;
  }
  if (answerFirst) {
    const pending = entriesBeingKept.get(store) ?? new Set<Promise<unknown>>();
    entriesBeingKept.set(store, pending);
    const kept = keep();
    pending.add(kept);
    void kept.finally(() => pending.delete(kept));
  } else await keep();
  return answer;
}

/** Control-log entries of answered downloads still being written, by store. */
const entriesBeingKept = new WeakMap<Store, Set<Promise<unknown>>>();

/**
 * Waits for the control-log entries still being written to `store` after their downloads were answered:
 * the service's stop waits for them, so that a replica stopping does not close its store under them.
 */
export async function controlLogKept(store: Store): Promise<void> {
  const pending = entriesBeingKept.get(store);
  if (pending) await Promise.allSettled([...pending]);
}

/**
 * Runs `work` on the connected device here, or forwards the request to the replica holding it. Here, it
 * takes one of the connection's places for device requests (503 `overloaded` at once when none is free),
 * unless its caller has given up while it was routed. `place: false` for the work of an open file download
 * (its next chunk, its close): the download itself is bounded (`maxDownloadsPerConnection`), and a close
 * refused for want of a place would leave the file open on the device. Such work sends nothing through the
 * device it is given (the download's FileReads and FileClose go through the association it was opened on),
 * so it gets the device as it is, not a view bound to its caller's deadline: a view is some forty functions
 * made, and a download asks for a chunk every 65,000 octets.
 */
export function deviceRunner(deps: DeviceOpsDeps) {
  return async <T>(
    op: Operation,
    request: unknown,
    ctx: HandlerContext,
    work: (device: LiveDevice, session: Session) => Promise<T>,
    forward = true,
    place = true,
  ): Promise<T> => {
    const id = (request as { params: { connectionId: string } }).params.connectionId.toLowerCase();
    const route = await deps.router.route(spaceOf(ctx), id, forward);
    if (route.kind === 'forwarded') return (await call(deps.bus, atInstance(op, route.owner), request as never, onBehalfOf(ctx))) as T;
    if (route.kind === 'site') return viaSite<T>(deps, op, route.site, request, ctx);
    if (route.kind === 'not_connected' || !route.device) throw notConnected(id);
    checkDeadline(ctx, 'The device request');
    const { session } = route;
    // every MMS request of the work carries the caller's deadline: none is sent once the caller has given up
    const device = place && Number.isFinite(ctx.deadline) ? route.device.within(ctx.deadline) : route.device;
    try {
      return await (place ? session.requests.run(id, () => work(device, session)) : work(device, session));
    } catch (err) {
      throw asDeviceProblem(err);
    }
  };
}

/**
 * Throws the caller's timeout when the device answered after the request's deadline: the caller has been
 * answered 504 (or is about to be), so what the device answered is not kept; `what` says what is dropped,
 * on a line at info.
 */
export function checkAnsweredInTime(ctx: HandlerContext, what: string): void {
  if (Date.now() < ctx.deadline) return;
  ctx.log.info({ lateMs: Date.now() - ctx.deadline }, `the device answered after the request's deadline: ${what}`);
  throw new ProblemError('upstream_timeout', `The device answered after the request's deadline; ${what}`);
}

/**
 * The device operations; `forward: true` for the queue group (the replica a request reached: forwards,
 * keeps the control log and the report subscriptions), `false` for the holder's own subjects.
 */
export function deviceOperations(deps: DeviceOpsDeps, forward: boolean): Implementation[] {
  const onDevice = deviceRunner(deps);

  /** Runs a write or a control and keeps it in the control log with its outcome, whatever that is. */
  const logged = (
    action: 'write' | 'control',
    req: { params: { connectionId: string }; body: { reference: string; value: unknown } },
    ctx: HandlerContext,
    run: () => Promise<null>,
  ) =>
    forward
      ? withControlLog(
          deps.store,
          ctx,
          req.params.connectionId,
          204,
          () => ({ action, reference: req.body.reference, value: req.body.value }),
          run,
        )
      : run();

  return [
    implement(readConnectionValues, (req, ctx) => {
      const references = req.body.references ?? [];
      const dataSets = req.body.dataSets ?? [];
      if (references.length + dataSets.length === 0)
        throw new ProblemError('validation_failed', 'Name at least one reference or data set', {
          errors: [{ path: '/body/references', message: 'empty, and no dataSets either' }],
        });
      return onDevice(
        readConnectionValues,
        req,
        ctx,
        async (device, session) => {
          const values = references.length ? await device.read(references) : [];
          const sets = dataSets.length ? await device.readDataSets(dataSets) : [];
          checkAnsweredInTime(ctx, 'the values read were not kept');
          const answer = [
            ...references.map((reference, i) => readResult(reference, values[i])),
            ...sets.map((set) => ({ reference: set.reference, members: set.members.map((m) => readResult(m.reference, m)) })),
          ];
          publishRead(deps.bus, spaceOf(ctx), req.params.connectionId.toLowerCase(), answer, ctx.requestId);
          // What was read is a value of the device like a reported one: its alarms are evaluated.
          session.observe(
            answer.flatMap((r) => ('members' in r ? r.members : [r])).flatMap((r) => ('value' in r ? [r as ObservedValue] : [])),
          );
          return answer;
        },
        forward,
      );
    }),
    implement(writeConnectionValue, (req, ctx) =>
      logged('write', req, ctx, () =>
        onDevice(writeConnectionValue, req, ctx, async (device) => (await device.write(req.body.reference, req.body.value), null), forward),
      ),
    ),
    implement(operateConnectionControl, (req, ctx) =>
      logged('control', req, ctx, () =>
        onDevice(
          operateConnectionControl,
          req,
          ctx,
          async (device) => {
            const { reference, ...control } = req.body;
            await device.operate(reference, { ...control, timeoutMs: controlTimeoutMs(ctx) });
            return null;
          },
          forward,
        ),
      ),
    ),
    implement(browseConnectionDevice, (req, ctx) =>
      onDevice(browseConnectionDevice, req, ctx, async (device) => (await device.browse()) as { logicalDevices: unknown[] }, forward),
    ),
    // A report block is switched on the device first (by the holder, wherever it runs) and kept only
    // when the device took it, so a refusal leaves nothing stored; a connection not connected now keeps
    // it for its next connect.
    implement(enableConnectionReport, async (req, ctx) => {
      const space = spaceOf(ctx);
      const id = req.params.connectionId.toLowerCase();
      const { rcb, ...options } = req.body;
      const keep = () => subscribeReport(deps.store, space, id, rcb, options);
      try {
        await onDevice(
          enableConnectionReport,
          req,
          ctx,
          async (device, session) => (await device.enableReport(rcb, session.enabling(rcb, options)), await keep(), null),
          forward,
        );
        // Taken by a site's device: kept here too, where the site copies its connections from.
        if (forward) await keep();
      } catch (err) {
        if (!(err instanceof ProblemError && err.code === 'not_connected')) throw err;
        await keep();
      }
      return null;
    }),
    implement(disableConnectionReport, async (req, ctx) => {
      const space = spaceOf(ctx);
      const id = req.params.connectionId.toLowerCase();
      const rcb = req.query.rcb;
      // The replica the request reached forgets the block, and where it was delivered to (enabled again,
      // it starts afresh, held or not); the holder, asked on its own subject, switches it off.
      if (forward && !(await unsubscribeReport(deps.store, space, id, rcb))) {
        if (!(await findConnection(deps.store, space, id))) throw connectionNotFound(req.params.connectionId);
        throw new ProblemError('not_found', `Report block ${rcb} is not enabled on connection ${req.params.connectionId}`);
      }
      if (forward) await forgetDeliveries(deps.store, space, id, blockKey(rcb));
      // Unsubscribed first, so that a reconnect does not enable it again; the device is told when connected,
      // and the session forgets the block once the device sends no more of it.
      const off = async (device: LiveDevice, session: Session) => {
        await device.disableReport(rcb).catch(() => undefined);
        await session.forgetBlock(rcb);
        return null;
      };
      // A site that does not answer now learns of it with its next copy of the connection.
      await onDevice(disableConnectionReport, req, ctx, off, forward).catch((err: unknown) => {
        if (!(err instanceof ProblemError && (err.code === 'not_connected' || err.code === 'site_unreachable'))) throw err;
      });
      return null;
    }),
    // The last values answer while the device is away too (stale); nobody holding the connection: none.
    implement(getConnectionValues, async (req, ctx) => {
      const id = req.params.connectionId.toLowerCase();
      const route = await deps.router.route(spaceOf(ctx), id, forward);
      if (route.kind === 'forwarded') return call(deps.bus, atInstance(getConnectionValues, route.owner), req, onBehalfOf(ctx));
      if (route.kind === 'site') return viaSite(deps, getConnectionValues, route.site, req, ctx);
      if (route.kind === 'not_connected') return [];
      return route.session.values.list().map((v) => ({ ...v, at: v.receivedAt }));
    }),
  ];
}
