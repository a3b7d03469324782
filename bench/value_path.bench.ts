/**
 * The main thread's share of a reported value after its decoding, in this process alone (no device, no
 * store, no HTTP): a report event of one value published as the protocol service publishes it (its own
 * encoding, `publishOwnEvent`, and a buffered entry's event id, `entryEventId`), carried by the in-process bus to the event log (which holds every event
 * for the run, as the live channel's 120 s do at 5,000 values/s), to a live follower that builds each
 * event's SSE frame as the gateway's live hub does, and to a durable consumer whose handler reads each
 * event as the history's does. `BENCH_VALUE_EVENTS` events (300,000 unless told) in turns of
 * `BENCH_VALUE_TURN` (25, a few TCP reads' worth of reports), `BENCH_ROUNDS` rounds (3).
 *
 * Reports the CPU of this process (user + system, every thread) per 10,000 events, the time garbage
 * collection took (from `perf_hooks` `gc` entries), the collections of each kind (which do not depend on the
 * machine's load) and the longest pause, and the heap used with the
 * log full: the figures the soak's event-loop delay follows, without its machine's noise.
 */
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { protocolEvents, type ReportEvent, decodeEvent } from '@scada/contracts';
import { MemoryBus, publishOwnEvent } from '@scada/platform';
import { pino } from 'pino';
import { liveMessage } from '@scada/gateway/parts';
import { entryEventId } from '@scada/protocol/parts';
import { benchRounds } from './harness.ts';

const events = Number(process.env.BENCH_VALUE_EVENTS ?? 300_000);
const turn = Number(process.env.BENCH_VALUE_TURN ?? 25);
const rounds = benchRounds;
const connectionId = '3f2a9c4e-8b1d-4e7a-a6c5-0d9e8f7a6b5c';
const rcb = 'SIMLD0/LLN0$BR$brcb01';
const log = pino({ level: 'silent' });

let gcMs = 0;
let gcWorst = 0;
let minor = 0;
let major = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcMs += e.duration;
    gcWorst = Math.max(gcWorst, e.duration);
    const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
    else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) minor++;
  }
}).observe({ entryTypes: ['gc'] });

const deviceQuality = { validity: 'good', flags: [] as string[], source: 'process' };
const quality = { validity: 'good' as const, detail: [] as string[], source: 'process' as const, test: false, operatorBlocked: false };

async function round(): Promise<{
  cpuPer10k: number;
  gcPer10k: number;
  gcWorst: number;
  minorPer10k: number;
  major: number;
  heapMiB: number;
  written: number;
}> {
  const bus = new MemoryBus();
  const eventLog = await bus.openEventLog({ maxAgeMs: 3_600_000 });
  let written = 0;
  const stopLive = eventLog.listen((e) => {
    const m = liveMessage(e);
    if (m) written += m.all().length * 2; // two clients, one frame shared
  });
  let recorded = 0;
  let done: () => void = () => undefined;
  const all = new Promise<void>((resolve) => {
    done = resolve;
  });
  const consumer = await bus.consumeEvents({
    name: 'history',
    subjects: [protocolEvents.report.subject()],
    holdMs: 60_000,
    maxBatch: 500,
    maxQueued: events + 1,
    log,
    handle: async (batch) => {
      for (const e of batch) recorded += decodeEvent(protocolEvents.report, e.data)?.values.length ?? 0;
      if (recorded >= events) done();
    },
  });
  if (typeof globalThis.gc === 'function') globalThis.gc();
  gcMs = 0;
  gcWorst = 0;
  minor = 0;
  major = 0;
  const cpu0 = process.cpuUsage();
  const base = Date.now() - 60_000;
  for (let n = 0; n < events; ) {
    for (let i = 0; i < turn && n < events; i++, n++) {
      const at = new Date(base + n).toISOString();
      const entryId = n.toString(16).padStart(16, '0');
      const event: ReportEvent & { space: string } = {
        space: 'default',
        connectionId,
        rcb,
        rptId: 'brcb01',
        seqNum: n & 0xffff,
        entryId,
        values: [
          {
            connectionId,
            reference: 'SIMLD0/GGIO1.AnIn1.mag.f[MX]',
            value: n,
            quality,
            timestamp: at,
            timestampSource: 'attribute',
            receivedAt: at,
            rcb,
            reason: ['data-change'],
            seqNum: n & 0xffff,
          },
        ],
        at,
      };
      const device = {
        rcb,
        rptId: 'brcb01',
        seqNum: n & 0xffff,
        timeOfEntry: at,
        entryId,
        values: [{ ref: 'SIMLD0/GGIO1.AnIn1.mag.f', value: n, quality: deviceQuality, timestamp: { time: at }, reason: ['dataChange'] }],
      };
      publishOwnEvent(bus, protocolEvents.report, event, {
        requestId: `report-${connectionId}`,
        eventId: entryEventId(connectionId, device),
        listed: 'values',
      });
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  await all;
  const used = process.cpuUsage(cpu0);
  const heapMiB = process.memoryUsage().heapUsed / 2 ** 20;
  const result = {
    cpuPer10k: ((used.user + used.system) / 1e3 / events) * 10_000,
    gcPer10k: (gcMs / events) * 10_000,
    gcWorst,
    minorPer10k: (minor / events) * 10_000,
    major,
    heapMiB,
    written,
  };
  stopLive();
  await consumer.stop();
  await eventLog.close();
  await bus.close();
  return result;
}

const results = [];
for (let r = 0; r < rounds; r++) results.push(await round());
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`| ${events} events, turns of ${turn}, ${rounds} rounds (median) | value |`);
console.log('|---|---:|');
console.log(
  `| CPU ms per 10,000 events | ${median(results.map((r) => r.cpuPer10k)).toFixed(0)} (${results.map((r) => r.cpuPer10k.toFixed(0)).join(', ')}) |`,
);
console.log(`| GC ms per 10,000 events | ${median(results.map((r) => r.gcPer10k)).toFixed(0)} |`);
console.log(`| young-generation collections per 10,000 events | ${median(results.map((r) => r.minorPer10k)).toFixed(1)} |`);
console.log(`| full collections in the round | ${median(results.map((r) => r.major))} |`);
console.log(`| longest GC pause, ms | ${median(results.map((r) => r.gcWorst)).toFixed(1)} |`);
console.log(`| heap used with the log full, MiB | ${median(results.map((r) => r.heapMiB)).toFixed(0)} |`);
