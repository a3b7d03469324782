/**
 * The production connector: an MMS association through the platform's own client and its IEC 61850
 * layer, seen as a {@link LiveDevice}. Identify is asked once on connect; the association ends when the
 * client closes (the device went away, did not answer the idle probe, or sent something unreadable).
 */
import type { Logger } from 'pino';
import { Iec61850Device, Iec61850Error } from '../iec61850/client/mod.ts';
import { MmsClient } from '../iec61850/mms/client.ts';
import type { Connector, LiveDevice, ReportOptions } from './live_device.ts';

export type MmsConnectorOptions = { requestTimeoutMs: number; idleProbeMs: number; log: Logger };

/** The IEC 61850 layer's errors about what the caller asked (a malformed reference, a value of the wrong type). */
const callerMistakes = new Set(['bad_reference', 'bad_value']);

/** A caller's mistake becomes a BadRequest-named error, which the API answers with 400. */
function classify(err: unknown): never {
  if (err instanceof Iec61850Error && callerMistakes.has(err.code)) {
    const bad = new Error(err.message);
    bad.name = 'BadReferenceError';
    throw bad;
  }
  throw err;
}

/** The API's trigger names (as SCL writes them) and the TrgOps flags of the client layer. */
const triggerFlags: Record<string, string> = { dchg: 'dataChange', qchg: 'qualityChange', dupd: 'dataUpdate', period: 'integrity', gi: 'gi' };

function reportOptions(o: ReportOptions) {
  return {
    ...(o.integrityPeriodMs === undefined ? {} : { intgPd: o.integrityPeriodMs }),
    ...(o.generalInterrogation === undefined ? {} : { gi: o.generalInterrogation }),
    ...(o.triggers === undefined ? {} : { trgOps: Object.fromEntries(Object.entries(triggerFlags).map(([api, flag]) => [flag, o.triggers!.includes(api)])) }),
  };
}

export function mmsConnector(options: MmsConnectorOptions): Connector {
  return async (target, signal) => {
    const client = await MmsClient.connect({
      host: target.host,
      port: target.port,
      connectTimeoutMs: options.requestTimeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      idleTimeoutMs: options.idleProbeMs,
      signal,
    });
    try {
      const ended = new Promise<Error | null>((resolve) => client.once('close', (reason) => resolve(reason.code === 'closed' || reason.code === 'cancelled' ? null : reason)));
      const identity = await client.identify();
      const device = new Iec61850Device(client, { origin: { orCat: 3, orIdent: 'scada-platform' } });
      device.on('reportError', (err) => options.log.warn({ err }, 'a report could not be decoded'));
      const live: LiveDevice = {
        identity,
        ended,
        onReport: (listener) => void device.on('report', (r) => listener({ rcb: r.rcb, rptId: r.rptId, seqNum: r.seqNum, values: r.values.map((v) => ({ ref: v.ref, value: v.value, ...(v.reason ? { reason: v.reason } : {}) })) })),
        browse: () => device.browse(),
        read: async (refs) => (await device.readValues(refs).catch(classify)).map((r) => (r.error === undefined ? r.value : { error: r.error })),
        write: (ref, value) => device.write(ref, value).catch(classify),
        operate: (ref, control) =>
          device.operate(ref, control.value, { test: control.test, check: { interlockCheck: control.interlockCheck, synchrocheck: control.synchroCheck } }).catch(classify),
        enableReport: async (rcb, o) => void (await device.enableReport(rcb, reportOptions(o)).catch(classify)),
        disableReport: (rcb) => device.disableReport(rcb).catch(classify),
        close: async () => {
          await client.conclude();
          await ended;
        },
      };
      return live;
    } catch (err) {
      client.abort();
      throw err;
    }
  };
}
