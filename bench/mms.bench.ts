/**
 * Live IEC 61850 sessions against the device simulator on loopback (the simulator in a process of its
 * own, so that it neither shares the CPU's event loop nor the heap measured here). From one run:
 * - reads per second on one association, against round trips of frames of the same size through a bare
 *   TCP echo on loopback (what the network stack alone allows);
 * - reports per second received, decoded and published on the bus by the platform, against the same
 *   reports received and decoded by a bare client;
 * - memory per idle connection with 100 connections held by one replica;
 * - time to re-establish a session after the device restarts, against the first connect;
 * - a device file (`BENCH_FILE_MIB`, 4 MiB by default) downloaded through the HTTP API, against the same
 *   file read by the platform's MMS client alone (FileOpen, FileRead to the end, FileClose), turn about,
 *   `BENCH_ROUNDS` rounds each (3 by default).
 *
 * Against a real server instead: `IEC61850_PEER=host:port` and `IEC61850_BASELINE_CMD` (a command that
 * reads the same attribute for `{seconds}` seconds with `{outstanding}` requests outstanding and prints
 * reads per second; the placeholders are filled in, or the two values appended). The platform's client and
 * the command then take turns, `BENCH_ROUNDS` rounds each (3 by default), with 1 and 5 outstanding, and the
 * table gives the medians (with the CPU this process spent a read), their ratio, and the range of the ratios of the rounds taken side by side (each
 * round of the platform against the baseline's round after it: the machine's other work moves both). Each
 * round also gives the server's own pace: the platform's read request, recorded once, written again by a
 * bare socket that decodes nothing (`mms_replay.ts`), with as many in flight, and at 5 with 20 (more than
 * the server negotiates): what no client passes. `IEC61850_READ_REF` names the attribute (`LD/LN$FC$DO$DA`); by default the
 * analogue input of libiec61850's `server_example_basic_io`. With `IEC61850_FILE` (a file of the peer's
 * file store, `COMTRADE/DR_0001.DAT`) and `IEC61850_FILE_BASELINE_CMD` (a command that downloads it, such
 * as libiec61850's file-tool `-h host -p port get COMTRADE/DR_0001.DAT`), the file is downloaded through the
 * platform's HTTP API and by the command, turn about, `BENCH_ROUNDS` rounds each; either pair may come
 * alone. `IEC61850_FILE_BASELINE_OUT` names the file the command writes (file-tool: the file's name in its
 * working directory), checked whole after each of its downloads: file-tool exits 0 when it fails. A download through the API also gives the CPU it took in this process (platform and `fetch`).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Iec61850Device, MmsClient } from '@scada/iec61850';
import { FIXTURE_SCL } from '@scada/testkit/simulator_fixture';
import { freePort, perSecond } from './harness.ts';
import {
  downloadByClient,
  downloadByCommand,
  downloadThroughApi,
  mibPerSecond,
  startBenchPlatform,
  type BenchPlatform,
  type Timed,
} from './mms_platform.ts';
import { recordRead, replayReads } from './mms_replay.ts';
import { waitForPort } from '@scada/testkit/faults/servers';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const idle = Number(process.env.MMS_BENCH_CONNECTIONS ?? 100);
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const D = 'SIMLD0';
const work = await mkdtemp(join(tmpdir(), 'scada-bench-mms-'));
const scl = join(work, 'sim.cid');
await writeFile(scl, FIXTURE_SCL);
const fileMiB = Number(process.env.BENCH_FILE_MIB ?? 4);
const benchFile = 'COMTRADE/DR_BENCH.DAT';
const store = join(work, 'files');
await mkdir(join(store, 'COMTRADE'), { recursive: true });
await writeFile(join(store, benchFile), randomBytes(Math.round(fileMiB * 1024 * 1024)));

async function simulator(port: number): Promise<ChildProcess> {
  const args = ['--import', 'tsx', 'simulator/src/main.ts', scl, '--port', String(port), '--files', store];
  const child = spawn(process.execPath, args, {
    cwd: new URL('..', import.meta.url).pathname,
    stdio: 'ignore',
  });
  await waitForPort(port, 30_000);
  return child;
}
const stopChild = async (c: ChildProcess) => {
  const gone = new Promise((r) => c.once('exit', r));
  c.kill('SIGKILL');
  await gone;
};

/** CPU microseconds of this process a read cost in the last round of {@link ourReads}. */
let lastCpuPerRead = 0;

/**
 * Reads per second of one attribute on one association with `outstanding` requests in flight; the CPU this
 * process spent a read meanwhile (every thread: the collector's helpers too) in {@link lastCpuPerRead}.
 */
async function ourReads(host: string, port: number, ref: string, outstanding: number): Promise<number> {
  const client = await MmsClient.connect({ host, port, maxOutstanding: 5 });
  try {
    await client.read([ref]);
    const before = process.cpuUsage();
    const rate = await perSecond(outstanding, seconds * 1000, () => client.read([ref]));
    const used = process.cpuUsage(before);
    lastCpuPerRead = (used.user + used.system) / (rate * seconds);
    return rate;
  } finally {
    await client.conclude();
  }
}

/** What the baseline command printed: reads per second. */
function baselineReads(template: string, outstanding: number): Promise<number> {
  const filled = template.includes('{seconds}')
    ? template.replaceAll('{seconds}', String(seconds)).replaceAll('{outstanding}', String(outstanding))
    : `${template} ${seconds} ${outstanding}`;
  return new Promise((resolve, reject) => {
    execFile('sh', ['-c', filled], { timeout: (seconds + 30) * 1000 }, (error, stdout) => {
      const rate = Number(stdout.trim().split(/\s+/).at(-1));
      if (error || !Number.isFinite(rate)) return reject(new Error(`baseline '${filled}' failed: ${error?.message ?? stdout}`));
      resolve(rate);
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The range of the ratios of rounds taken side by side: `lowest-highest`. */
const pairRange = (ours: number[], theirs: number[]) => {
  const ratios = ours.map((o, i) => o / theirs[i]).sort((a, b) => a - b);
  return `${ratios[0].toFixed(2)}-${ratios.at(-1)!.toFixed(2)}`;
};

/** The platform's client against a real server's own client, turn about, `rounds` rounds each. */
async function againstPeer(peer: string, command: string): Promise<void> {
  const [host, port] = [peer.slice(0, peer.lastIndexOf(':')), Number(peer.slice(peer.lastIndexOf(':') + 1))];
  const ref = process.env.IEC61850_READ_REF ?? 'simpleIOGenericIO/GGIO1$MX$AnIn1$mag$f';
  const lines: string[] = [];
  const recorded = await recordRead(host, port, ref);
  for (const outstanding of [1, 5]) {
    const ours: number[] = [];
    const cpu: number[] = [];
    const theirs: number[] = [];
    // the server's pace: the platform's read request written again by a bare socket, as many in flight
    // as the clients have, and more than the server negotiates
    const bare: number[] = [];
    const bareMore: number[] = [];
    for (let round = 0; round < rounds; round++) {
      ours.push(await ourReads(host, port, ref, outstanding));
      cpu.push(lastCpuPerRead);
      theirs.push(await baselineReads(command, outstanding));
      bare.push(await replayReads(host, port, recorded, outstanding, seconds * 1000));
      if (outstanding === 5) bareMore.push(await replayReads(host, port, recorded, 4 * outstanding, seconds * 1000));
    }
    const [o, t, b] = [median(ours), median(theirs), median(bare)];
    console.error(
      `${outstanding} outstanding: ours ${ours.map((x) => x.toFixed(0)).join(', ')} (CPU ${cpu.map((x) => x.toFixed(1)).join(', ')} µs a read); baseline ${theirs.map((x) => x.toFixed(0)).join(', ')}; bare socket ${bare.map((x) => x.toFixed(0)).join(', ')}${bareMore.length > 0 ? `; bare socket, ${4 * outstanding} outstanding ${bareMore.map((x) => x.toFixed(0)).join(', ')}` : ''}`,
    );
    lines.push(
      `| reads of one attribute on one association, ${outstanding} outstanding (median of ${rounds}; ${median(cpu).toFixed(1)} µs of this process's CPU a read) | ${o.toFixed(0)}/s | ${(o / t).toFixed(2)} of ${t.toFixed(0)}/s by the baseline client (rounds side by side: ${pairRange(ours, theirs)}) |`,
      `| the same read request written again by a bare socket that decodes nothing, ${outstanding} outstanding | ${b.toFixed(0)}/s | the platform's client ${(o / b).toFixed(2)} of it, the baseline client ${(t / b).toFixed(2)} |`,
    );
    if (bareMore.length > 0) {
      const m = median(bareMore);
      lines.push(
        `| the same, ${4 * outstanding} outstanding (more than the server negotiates) | ${m.toFixed(0)}/s | the platform's client at ${outstanding} ${(o / m).toFixed(2)} of it, the baseline client ${(t / m).toFixed(2)} |`,
      );
    }
  }
  console.log(
    [
      `### IEC 61850 reads against ${peer}, ${new Date().toISOString().slice(0, 10)}, ${seconds} s per round, rounds alternating`,
      '',
      '| case | result | against the baseline |',
      '|---|---:|---|',
      ...lines,
    ].join('\n'),
  );
}

/**
 * One file downloaded by the platform and by a baseline, turn about, `rounds` rounds each after one download
 * of each to warm up: the table row with the medians, their ratio and the range of the rounds' ratios.
 */
async function downloads(label: string, by: string, ours: () => Promise<Timed>, theirs: () => Promise<Timed>): Promise<string> {
  await ours();
  await theirs();
  const [a, b]: Timed[][] = [[], []];
  const cpu: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const before = process.cpuUsage();
    a.push(await ours());
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 1000);
    b.push(await theirs());
  }
  const rates = (xs: Timed[]) => xs.map((x) => mibPerSecond(x).toFixed(1)).join(', ');
  console.error(`${label}: ours ${rates(a)} MiB/s (CPU ${cpu.map((c) => c.toFixed(0)).join(', ')} ms); baseline ${rates(b)} MiB/s`);
  const [o, t] = [median(a.map(mibPerSecond)), median(b.map(mibPerSecond))];
  return `| ${label} (median of ${rounds}; ${median(cpu).toFixed(0)} ms of this process's CPU each) | ${o.toFixed(1)} MiB/s | ${(o / t).toFixed(2)} of ${t.toFixed(1)} MiB/s ${by} (rounds side by side: ${pairRange(a.map(mibPerSecond), b.map(mibPerSecond))}) |`;
}

/** A file of a real server's file store downloaded through the platform's API and by the server's own client. */
async function filesAgainstPeer(peer: string, file: string, command: string): Promise<void> {
  const [host, port] = [peer.slice(0, peer.lastIndexOf(':')), Number(peer.slice(peer.lastIndexOf(':') + 1))];
  const p = await startBenchPlatform();
  try {
    const id = await p.create('files', host, port);
    await p.start(id);
    const { bytes } = await downloadThroughApi(p, id, file);
    const row = await downloads(
      `${file} (${(bytes / 1024 / 1024).toFixed(1)} MiB) downloaded through the HTTP API`,
      'by the baseline command (its connect included), the platform disconnected meanwhile',
      () => downloadThroughApi(p, id, file),
      // one association at a time: libiec61850's server answers each FileRead about 11 ms late while it holds another
      async () => {
        await p.disconnect(id);
        const timed = await downloadByCommand(command, bytes, fileCommandOut);
        // the server lets the command's association go within moments of its exit, as it does the platform's
        // (`disconnect` waits a second for it): until then, the platform's FileReads would be answered late
        await new Promise((r) => setTimeout(r, 1000));
        await p.start(id);
        return timed;
      },
    );
    // Where the difference lies: the same file read by the platform's MMS client alone, on an association
    // of its own in this process, against the same command (the platform's connection stopped throughout).
    await p.disconnect(id);
    const settled = async (timed: Timed) => (await new Promise((r) => setTimeout(r, 1000)), timed);
    const alone = await downloads(
      `the same file read by the platform's MMS client alone (FileOpen, FileRead to the end, FileClose; its connect not included)`,
      'by the baseline command',
      async () => settled(await downloadByClient(host, port, file)),
      async () => settled(await downloadByCommand(command, bytes, fileCommandOut)),
    );
    console.log(
      [
        `### IEC 61850 file download against ${peer}, ${new Date().toISOString().slice(0, 10)}, rounds alternating`,
        '',
        '| case | result | against the baseline |',
        '|---|---:|---|',
        row,
        alone,
      ].join('\n'),
    );
  } finally {
    await p.stop();
  }
}

const peer = process.env.IEC61850_PEER;
const baselineCommand = process.env.IEC61850_BASELINE_CMD;
const peerFile = process.env.IEC61850_FILE;
const fileCommand = process.env.IEC61850_FILE_BASELINE_CMD;
const fileCommandOut = process.env.IEC61850_FILE_BASELINE_OUT;
if ([peer, baselineCommand, peerFile, fileCommand].some((v) => v !== undefined)) {
  if (!peer || (!baselineCommand && !fileCommand))
    throw new Error('IEC61850_PEER goes with IEC61850_BASELINE_CMD or IEC61850_FILE_BASELINE_CMD');
  if ((peerFile === undefined) !== (fileCommand === undefined)) throw new Error('IEC61850_FILE and IEC61850_FILE_BASELINE_CMD go together');
  if (baselineCommand) await againstPeer(peer, baselineCommand);
  if (peerFile && fileCommand) await filesAgainstPeer(peer, peerFile, fileCommand);
  await rm(work, { recursive: true, force: true });
} else {
  await againstSimulator();
}

/** Reads, reports, reconnects and memory against the project's simulator, each with its own baseline. */
async function againstSimulator(): Promise<void> {
  const simPort = await freePort();
  let sim = await simulator(simPort);
  const rows: string[] = [];
  try {
    // 1. Reads on one association against a bare TCP echo of the same frame sizes.
    const client = await MmsClient.connect({ host: '127.0.0.1', port: simPort, maxOutstanding: 5 });
    const ref = `${D}/GGIO1$MX$AnIn1$mag$f`;
    await client.read([ref]);
    const reads = await perSecond(5, seconds * 1000, () => client.read([ref]));
    await client.conclude();
    const echo = createServer((s) => s.on('data', (d) => s.write(d)));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    const { connect } = await import('node:net');
    const socket = connect((echo.address() as { port: number }).port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const frame = Buffer.alloc(80);
    const waiting: (() => void)[] = [];
    socket.on('data', () => waiting.shift()?.());
    const echoes = await perSecond(1, seconds * 1000, () => new Promise<void>((r) => (waiting.push(r), socket.write(frame))));
    socket.destroy();
    echo.close();
    rows.push(
      `| reads of one attribute on one association, 5 outstanding | ${reads.toFixed(0)}/s | ${(reads / echoes).toFixed(2)} of ${echoes.toFixed(0)} bare TCP echo round trips/s |`,
    );

    // 2. Reports: integrity reports every millisecond, decoded by a bare client, then through the platform.
    const bare = await Iec61850Device.connect({ host: '127.0.0.1', port: simPort });
    let bareCount = 0;
    bare.on('report', () => bareCount++);
    await bare.enableReport(`${D}/LLN0$RP$urcb01`, { intgPd: 1, trgOps: { integrity: true, dataChange: true } });
    await new Promise((r) => setTimeout(r, 500));
    bareCount = 0;
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const bareRate = bareCount / seconds;
    await bare.disableReport(`${D}/LLN0$RP$urcb01`);
    await bare.conclude();

    const p: BenchPlatform = await startBenchPlatform({ MMS_RECONNECT_MIN_MS: '500' });
    try {
      const { headers, url } = p;
      const create = (name: string) => p.create(name, '127.0.0.1', simPort);
      const connected = p.connected;
      const id = await create('reports');
      let published = 0;
      p.proc.bus.subscribe('events.protocol.report', () => void published++);
      let started = performance.now();
      await fetch(`${url}/api/connections/${id}/start`, { method: 'POST', headers });
      await connected(id);
      const firstConnectMs = performance.now() - started;
      await fetch(`${url}/api/connections/${id}/reports`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ rcb: `${D}/LLN0$RP$urcb01`, integrityPeriodMs: 1, triggers: ['period', 'dchg'] }),
      });
      await new Promise((r) => setTimeout(r, 500));
      published = 0;
      await new Promise((r) => setTimeout(r, seconds * 1000));
      const platformRate = published / seconds;
      rows.push(
        `| reports received, decoded and published as events.protocol.report | ${platformRate.toFixed(0)}/s | ${(platformRate / bareRate).toFixed(2)} of ${bareRate.toFixed(0)}/s decoded by a bare client |`,
      );
      await fetch(`${url}/api/connections/${id}/reports?rcb=${encodeURIComponent(`${D}/LLN0$RP$urcb01`)}`, { method: 'DELETE', headers });

      // 3. A device file downloaded through the API, against the platform's MMS client reading it alone.
      rows.push(
        await downloads(
          `a device file of ${fileMiB} MiB downloaded through the HTTP API`,
          'read by the MMS client alone',
          () => downloadThroughApi(p, id, benchFile),
          () => downloadByClient('127.0.0.1', simPort, benchFile),
        ),
      );

      // 4. Re-establishing after the device restarts (kill and start again), against the first connect.
      const restarts: number[] = [];
      for (let i = 0; i < 3; i++) {
        await stopChild(sim);
        sim = await simulator(simPort);
        started = performance.now();
        await connected(id);
        restarts.push(performance.now() - started);
      }
      const restartMs = restarts.sort((a, b) => a - b)[1];
      rows.push(
        `| session re-established after the device restarts (median of 3, from the device listening again) | ${restartMs.toFixed(0)} ms | ${(restartMs / firstConnectMs).toFixed(2)} of the first connect (${firstConnectMs.toFixed(0)} ms) |`,
      );

      // 5. Memory per idle connection, with `idle` connections held by this one replica.
      const ids: string[] = [];
      for (let i = 0; i < idle; i++) ids.push(await create(`idle-${i}`));
      gc();
      const before = process.memoryUsage();
      for (const c of ids) await fetch(`${url}/api/connections/${c}/start`, { method: 'POST', headers });
      for (const c of ids) await connected(c);
      await new Promise((r) => setTimeout(r, 2000));
      gc();
      const after = process.memoryUsage();
      const heap = (after.heapUsed - before.heapUsed) / idle;
      // The process's resident size moves by whole pages with the collector and the allocator, far more
      // than a hundred sessions weigh; the heap after a full collection is what the sessions keep.
      rows.push(
        `| memory per idle connection, ${idle} held by one replica (heap after a full collection) | ${(heap / 1024).toFixed(1)} KiB | |`,
      );
    } finally {
      await p.stop();
    }
  } finally {
    await stopChild(sim);
    await rm(work, { recursive: true, force: true });
  }
  console.log(
    [
      `### IEC 61850 sessions against the simulator, ${new Date().toISOString().slice(0, 10)}, ${seconds} s per case`,
      '',
      '| case | result | against the baseline |',
      '|---|---:|---|',
      ...rows,
    ].join('\n'),
  );
}
