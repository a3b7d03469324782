/**
 * The device's records: its file store (a directory listed, a file downloaded in chunks) and its logs (a
 * page of entries by time or after an entry). Each runs on the replica holding the connection, as every
 * device operation does (`device_ops.ts`); a download's chunks find their way to the same replica by the
 * connection they name. The opening of each download, and each file deleted, is kept in the control log,
 * refused or not; a download that opened is answered without waiting for its entry to be written.
 */
import {
  closeConnectionFile,
  deleteConnectionFile,
  listConnectionFiles,
  openConnectionFile,
  ProblemError,
  queryConnectionLog,
  readConnectionFileChunk,
  type LogEntry,
  type RequestOf,
} from '@scada/contracts';
import { comtradeRecords } from '@scada/iec61850';
import { implement, spaceOf, type HandlerContext, type Implementation } from '@scada/platform';
import type { FileDownloads } from '../sessions/file_downloads.ts';
import { inclusionReasonsOf } from '../sessions/last_values.ts';
import type { DeviceLogPage, DeviceLogQuery, LiveDevice } from '../sessions/live_device.ts';
import { deviceRunner, withControlLog, type DeviceOpsDeps } from './device_ops.ts';

/** What the record operations need: the device operations' own, and the downloads of this replica. */
export type DeviceRecordDeps = DeviceOpsDeps & { downloads: FileDownloads };

/** Most entries one listing gathers from the device's pages before it answers with `next`. */
const LISTING_ENTRIES = 1000;

/** 1984-01-01: the earliest time MMS TimeOfDay carries, where a query by time starts without `from`. */
const JOURNAL_EPOCH_MS = Date.UTC(1984, 0, 1);
/** The last day MMS TimeOfDay carries (65535 days after 1984). */
const JOURNAL_END_MS = JOURNAL_EPOCH_MS + 65535 * 86_400_000;

/** Where a download belongs: the space and the connection. */
function ownerOf(ctx: HandlerContext, connectionId: string): string {
  return `${spaceOf(ctx)}/${connectionId.toLowerCase()}`;
}

/** A directory, the device's pages followed up to {@link LISTING_ENTRIES} entries. */
async function listing(device: LiveDevice, path: string, after: string | undefined) {
  const entries: Awaited<ReturnType<LiveDevice['listFiles']>>['entries'] = [];
  let cursor = after;
  let moreFollows = false;
  do {
    const page = await device.listFiles(path, cursor);
    entries.push(...page.entries);
    moreFollows = page.moreFollows;
    const last = page.entries.at(-1)?.name;
    // a device that says more follow but names nothing new would be asked forever
    if (moreFollows && (last === undefined || last === cursor))
      throw new ProblemError('bad_gateway', 'The device says more entries follow but names none after the last');
    cursor = last;
  } while (moreFollows && entries.length < LISTING_ENTRIES);
  return {
    path,
    entries: entries.map((e) => ({ name: e.name, size: e.size, lastModified: e.lastModified ?? null, kind: e.kind })),
    comtrade: comtradeRecords(entries),
    moreFollows,
    next: moreFollows ? (cursor ?? null) : null,
  };
}

type LogRequest = RequestOf<typeof queryConnectionLog>;

function badQuery(path: string, message: string): ProblemError {
  return new ProblemError('validation_failed', `The log query is not one the device can answer: ${message}`, {
    errors: [{ path: `/query/${path}`, message }],
  });
}

/** A time of the query in ms, within what MMS TimeOfDay carries. */
function timeOf(name: string, iso: string): number {
  const ms = Date.parse(iso);
  if (ms < JOURNAL_EPOCH_MS || ms > JOURNAL_END_MS) throw badQuery(name, 'MMS journal times run from 1984 to 2163');
  return ms;
}

/** The device query of the API's: by time (from the start of the log, up to now), or after an entry with its time. */
function logQueryOf(q: LogRequest['query']): { query: DeviceLogQuery; to: number } {
  const to = q.to === undefined ? Date.now() : timeOf('to', q.to);
  if (q.after !== undefined || q.entryTime !== undefined) {
    if (q.after === undefined) throw badQuery('after', 'entryTime is the time of the entry `after` names');
    if (q.entryTime === undefined) throw badQuery('entryTime', 'QueryLogAfter takes the time of the entry with its EntryID');
    if (q.from !== undefined) throw badQuery('from', 'a query is by time or after an entry, not both');
    return { query: { after: q.after.toLowerCase(), entryTime: timeOf('entryTime', q.entryTime) }, to };
  }
  const from = q.from === undefined ? JOURNAL_EPOCH_MS : timeOf('from', q.from);
  if (from > to) throw badQuery('from', '`from` is after `to`');
  return { query: { from, to }, to };
}

/** A page of entries as the API answers it; a query after an entry stops at `to` (QueryLogAfter has no end of its own). */
function logPage(log: string, page: DeviceLogPage, to: number, after: boolean) {
  let entries = page.entries;
  let moreFollows = page.moreFollows;
  const past = after ? entries.findIndex((e) => e.time !== null && Date.parse(e.time) > to) : -1;
  if (past >= 0) {
    entries = entries.slice(0, past);
    moreFollows = false;
  }
  const last = entries.at(-1);
  const next = moreFollows && last?.time ? { after: last.entryId, entryTime: last.time, to: new Date(to).toISOString() } : null;
  const out: LogEntry[] = entries.map((e) => ({
    entryId: e.entryId,
    time: e.time,
    values: e.values.map((v) => ({ reference: v.ref, value: v.value ?? null, reason: inclusionReasonsOf(v.reason) })),
  }));
  return { log, entries: out, moreFollows, next };
}

/** A log reference in its MMS form: `LD/LN$LogName`. */
function journalReference(logReference: string): string {
  const slash = logReference.indexOf('/');
  return `${logReference.slice(0, slash)}/${logReference.slice(slash + 1).replace('.', '$')}`;
}

/** The record operations; `forward` as for the device operations (`deviceOperations`). */
export function deviceRecordOperations(deps: DeviceRecordDeps, forward: boolean): Implementation[] {
  const onDevice = deviceRunner(deps);
  return [
    implement(listConnectionFiles, (req, ctx) =>
      onDevice(listConnectionFiles, req, ctx, (device) => listing(device, req.query.path ?? '', req.query.after), forward),
    ),
    implement(openConnectionFile, (req, ctx) => {
      const owner = ownerOf(ctx, req.params.connectionId);
      const run = () =>
        onDevice(openConnectionFile, req, ctx, (device) => deps.downloads.open(owner, device, req.query.path, ctx.deadline), forward);
      if (!forward) return run();
      return withControlLog(
        deps.store,
        ctx,
        req.params.connectionId,
        200,
        (opened) => ({ action: 'file-download', reference: req.query.path, value: opened ? { size: opened.size } : null }),
        run,
        // the download starts without waiting for its entry: the device's first answers arrive meanwhile
        true,
      );
    }),
    implement(deleteConnectionFile, (req, ctx) => {
      const run = () =>
        onDevice(deleteConnectionFile, req, ctx, async (device) => (await device.deleteFile(req.query.path), null), forward);
      if (!forward) return run();
      return withControlLog(
        deps.store,
        ctx,
        req.params.connectionId,
        204,
        () => ({ action: 'file-delete', reference: req.query.path, value: null }),
        run,
      );
    }),
    implement(readConnectionFileChunk, (req, ctx) =>
      onDevice(
        readConnectionFileChunk,
        req,
        ctx,
        () => deps.downloads.chunk(ownerOf(ctx, req.params.connectionId), req.query.download, req.query.index),
        forward,
        false,
      ),
    ),
    implement(closeConnectionFile, (req, ctx) =>
      onDevice(
        closeConnectionFile,
        req,
        ctx,
        async () => (await deps.downloads.close(ownerOf(ctx, req.params.connectionId), req.query.download), null),
        forward,
        false,
      ),
    ),
    implement(queryConnectionLog, (req, ctx) => {
      const { query, to } = logQueryOf(req.query);
      const log = journalReference(req.params.logReference);
      return onDevice(
        queryConnectionLog,
        req,
        ctx,
        async (device) => logPage(log, await device.queryLog(log, query), to, 'after' in query),
        forward,
      );
    }),
  ];
}
