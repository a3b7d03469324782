/**
 * The production connector: an MMS association through the platform's own client and its IEC 61850
 * layer, seen as a {@link LiveDevice}. Identify is asked once on connect; the association ends when the
 * client closes (the device went away, did not answer the idle probe, or sent something unreadable).
 */
import type { Logger } from 'pino';
import { ProblemError } from '@scada/contracts';
import {
  dataAccessErrorText,
  Iec61850Device,
  MmsClient,
  MmsError,
  readSettingGroupControls,
  setEditValues,
  settingReferences,
  sgcbMmsReference,
  writeSgcb,
  type SgcbAttribute,
} from '@scada/iec61850';
import { answer, type DeviceService } from './device_errors.ts';
import { deviceRecords } from './mms_records.ts';
import type { Connector, DeviceReport, LiveDevice, ReportOptions, SettingGroupBlock } from './live_device.ts';

export type MmsConnectorOptions = {
  requestTimeoutMs: number;
  /** How long a request waits for a turn behind the association's outstanding ones (MMS_QUEUE_WAIT_MS). */
  queueWaitMs: number;
  idleProbeMs: number;
  log: Logger;
};

/** The API's trigger names (as SCL writes them) and the TrgOps flags of the client layer. */
const triggerFlags: Record<string, string> = {
  dchg: 'dataChange',
  qchg: 'qualityChange',
  dupd: 'dataUpdate',
  period: 'integrity',
  gi: 'gi',
};

/** The API's optional field names and the OptFlds flags of the client layer. */
const optionalFieldFlags: Record<string, string> = {
  'sequence-number': 'sequenceNumber',
  'report-time-stamp': 'reportTimeStamp',
  'reason-for-inclusion': 'reasonForInclusion',
  'data-set-name': 'dataSetName',
  'data-reference': 'dataReference',
  'buffer-overflow': 'bufferOverflow',
  'entry-id': 'entryId',
  'conf-revision': 'configRevision',
  segmentation: 'segmentation',
};

function reportOptions(o: ReportOptions) {
  return {
    ...(o.integrityPeriodMs === undefined ? {} : { intgPd: o.integrityPeriodMs }),
    ...(o.bufferTimeMs === undefined ? {} : { bufTm: o.bufferTimeMs }),
    ...(o.entryId === undefined ? {} : { entryId: o.entryId }),
    ...(o.optionalFields === undefined
      ? {}
      : { optFlds: Object.fromEntries(Object.entries(optionalFieldFlags).map(([api, flag]) => [flag, o.optionalFields!.includes(api)])) }),
    ...(o.generalInterrogation === undefined ? {} : { gi: o.generalInterrogation }),
    ...(o.triggers === undefined
      ? {}
      : { trgOps: Object.fromEntries(Object.entries(triggerFlags).map(([api, flag]) => [flag, o.triggers!.includes(api)])) }),
  };
}

/** The device service of each write of a setting group control block. */
const sgcbServices: Record<SgcbAttribute, DeviceService> = {
  ActSG: 'select-active-sg',
  EditSG: 'select-edit-sg',
  CnfEdit: 'confirm-edit-sg-values',
};

/** Data access errors of a read that mean the logical device has no block: object-undefined, object-non-existent. */
const NO_BLOCK = new Set([4, 10]);

/**
 * The setting group side of a device: its blocks, their settings, and the writes of IEC 61850-8-1's
 * mapping of the setting group services.
 */
function settingGroups(
  view: Iec61850Device,
): Pick<LiveDevice, 'settingGroupControls' | 'settingGroupControl' | 'settingReferences' | 'writeSettingGroupControl' | 'setEditValues'> {
  const device = { client: view.requests, typeOf: (ref: string) => view.typeOf(ref) };
  return {
    settingGroupControls: () =>
      answer('read-sgcb', 'LLN0$SP$SGCB', async () =>
        (await readSettingGroupControls(device)).flatMap((b): SettingGroupBlock[] => (b.control ? [b.control] : [])),
      ),
    settingGroupControl: (ld) =>
      answer('read-sgcb', sgcbMmsReference(ld), async () => {
        const [block] = await readSettingGroupControls(device, [ld]);
        if (block?.control) return block.control;
        const code = block?.error ?? 10;
        if (NO_BLOCK.has(code)) throw new ProblemError('not_found', `Logical device ${ld} has no setting group control block`);
        throw MmsError.fromAccess(code, dataAccessErrorText(code), sgcbMmsReference(ld));
      }),
    settingReferences: (ld) => answer('browse', ld, () => settingReferences(device, ld)),
    writeSettingGroupControl: (ld, attribute, group) =>
      answer(sgcbServices[attribute], sgcbMmsReference(ld, attribute), () => writeSgcb(device, ld, attribute, group)),
    setEditValues: (ld, values) =>
      answer('set-edit-sg-values', ld, async () =>
        (await setEditValues(device, ld, values)).map((r) =>
          r.ok ? { reference: r.reference } : { reference: r.reference, error: r.errorText },
        ),
      ),
  };
}

export function mmsConnector(options: MmsConnectorOptions): Connector {
  return async (target, signal) => {
    const client = await MmsClient.connect({
      host: target.host,
      port: target.port,
      connectTimeoutMs: options.requestTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      queueTimeoutMs: options.queueWaitMs,
      idleTimeoutMs: options.idleProbeMs,
      ...(target.password === undefined ? {} : { password: target.password }),
      ...(target.tls === undefined ? {} : { tls: target.tls }),
      signal,
    });
    try {
      const ended = new Promise<Error | null>((resolve) =>
        client.once('close', (reason) => resolve(reason.code === 'closed' || reason.code === 'cancelled' ? null : reason)),
      );
      const identity = await client.identify();
      const base = new Iec61850Device(client, { origin: { orCat: 3, orIdent: 'scada-platform' } });
      base.on('reportError', (err) => options.log.warn({ err }, 'a report could not be decoded'));
      const onReport = (listener: (report: DeviceReport) => void) =>
        void base.on('report', (r) =>
          listener({
            rcb: r.rcb,
            rptId: r.rptId,
            seqNum: r.seqNum,
            timeOfEntry: r.timeOfEntry,
            entryId: r.entryId,
            bufferOverflow: r.bufferOverflow,
            values: r.values.map(({ error: _e, ...v }) => v),
          }),
        );
      const close = async () => {
        await client.conclude();
        await ended;
      };
      /** The device seen through `device`'s requests: the association's own, or a view's bound to a caller's deadline. */
      const liveOf = (device: Iec61850Device): LiveDevice => ({
        identity,
        ended,
        association: base,
        within: (deadline) => liveOf(device.within(deadline)),
        onReport,
        holdReads: (until, maxMs) => client.holdReads(until, maxMs),
        browse: () => answer('browse', target.host, () => device.browse()),
        modelNames: async () => {
          const domains = await device.requests.getAllNames({ objectClass: 'domain' });
          const out = [];
          for (const name of domains)
            out.push({
              name,
              logicalNodes: (await device.requests.getAllNames({ objectClass: 'namedVariable', domain: name })).filter(
                (v) => !v.includes('$'),
              ),
            });
          return out;
        },
        readDataSets: (refs) =>
          Promise.all(
            refs.map((ref) =>
              answer('read-data-set', ref, async () => {
                const ds = await device.readDataSet(ref);
                return {
                  reference: ref,
                  members: ds.members.map(({ ref, error, ...value }) =>
                    error === undefined ? { reference: ref, ...value } : { reference: ref, error },
                  ),
                };
              }),
            ),
          ),
        read: async (refs) =>
          (await answer('read', refs.join(', '), () => device.readValues(refs))).map(({ ref: _r, error, ...value }) =>
            error === undefined ? value : { error },
          ),
        write: (ref, value) => answer('write', ref, () => device.write(ref, value)),
        operate: (ref, control) =>
          answer('operate', ref, () =>
            device.operate(ref, control.value, {
              test: control.test,
              check: { interlockCheck: control.interlockCheck, synchrocheck: control.synchroCheck },
              ...(control.timeoutMs === undefined ? {} : { terminationTimeoutMs: control.timeoutMs }),
            }),
          ),
        enableReport: (rcb, o) => answer('enable-report', rcb, async () => void (await device.enableReport(rcb, reportOptions(o)))),
        disableReport: (rcb) => answer('disable-report', rcb, () => device.disableReport(rcb)),
        ...settingGroups(device),
        ...deviceRecords(device),
        close,
      });
      const live = liveOf(base);
      return live;
    } catch (err) {
      client.abort();
      throw err;
    }
  };
}
