/**
 * The live channel's opening snapshot of a large space, for `live.bench.ts`: a space of 10,000 started
 * connections with 5 last values each (50,000 values), followed by one client that reads as fast as it
 * can. The connections and their session records are written straight into the store (through the API
 * that would take minutes), and their values come from a stand-in for the replica holding them, which
 * answers `getConnectionValues` on the holder's own subject as the protocol service does; everything
 * between (the protocol service's paged `liveSnapshot`, the bus, the gateway writing the stream) is the
 * platform's own. Measured: time to the response headers, to the first byte of the snapshot and to its
 * end, its size, the gateway's heap at its peak above where it started, and whether the whole snapshot
 * asked for at once would have fit one bus message.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { getConnectionValues, liveSnapshot } from '@scada/contracts';
import { call, implement, serve } from '@scada/platform';
import { atInstance } from '@scada/protocol';
import { pino } from 'pino';
import type { PlatformProcess } from '../launch.ts';

/** One opening as the client saw it. */
export type SnapshotRun = { headersMs: number; firstByteMs: number; snapshotMs: number; bytes: number; sessions: number; values: number };

/** The measurements of one platform. */
export type SnapshotResult = { runs: SnapshotRun[]; heapPeakMiB: number; unpaged: string };

const holder = 'bench-holder';
const valuesPer = 5;

/** Fills a new space with `connections` started connections, held by a stand-in; answers the space. */
export async function largeSpace(proc: PlatformProcess, base: string, headers: Record<string, string>, connections: number) {
  const json = { ...headers, 'content-type': 'application/json' };
  const space = (
    (await (
      await fetch(`${base}/api/spaces`, { method: 'POST', headers: json, body: JSON.stringify({ name: `large-${Date.now()}` }) })
    ).json()) as { id: string }
  ).id;
  const project = (await (
    await fetch(`${base}/api/projects`, {
      method: 'POST',
      headers: { ...json, 'x-space': space },
      body: JSON.stringify({ name: 'large', isActive: true }),
    })
  ).json()) as { id: string };
  const store = proc.store!;
  await store.query(
    `insert into protocol.connections (space, id, project_id, name, ip, port, protocol, created_by, creation_date, last_modified_by, last_modified_date, started)
     select $1, gen_random_uuid(), $2::uuid, 'ied-' || lpad(g::text, 5, '0'), '127.0.0.1', 102, 'IEC 61850', 'bench', now(), 'bench', now(), true
       from generate_series(1, $3::int) g`,
    [space, project.id, connections],
  );
  await store.query(
    `insert into protocol.session_states (space, connection_id, owner, state, since, reconnects, warnings)
     select space, id, $2, 'connected', now(), 0, '[]'::jsonb from protocol.connections where space = $1`,
    [space, holder],
  );
  await store.query(
    `insert into protocol.session_leases (space, connection_id, owner, expires_at)
     select space, id, $2, now() + interval '1 day' from protocol.connections where space = $1`,
    [space, holder],
  );
  const at = new Date().toISOString();
  const quality = { validity: 'good' as const, detail: [], source: 'process' as const, test: false, operatorBlocked: false };
  const stand = await serve(
    proc.bus,
    { name: 'protocol-holder', version: '0.1.0', description: 'stand-in holder of the benchmark', instance: holder },
    [
      implement(atInstance(getConnectionValues, holder), async () =>
        Array.from({ length: valuesPer }, (_, i) => ({
          reference: `LD0/MMXU1.${['TotW', 'TotVAr', 'Hz', 'PhV.phsA', 'A.phsA'][i]}.mag.f`,
          value: 1000 + i + Math.random(),
          quality,
          timestamp: at,
          timestampSource: 'attribute' as const,
          receivedAt: at,
          rcb: 'LD0/LLN0$BR$brcb01',
          reason: ['data-change' as const],
          seqNum: 7,
          stale: false,
          at,
        })),
      ),
    ],
    pino({ level: 'warn' }),
  );
  return { space, stop: () => stand.stop() };
}

/** Opens the space's stream `runs` times, one after the other, reading each snapshot whole. */
export async function measureSnapshot(
  proc: PlatformProcess,
  base: string,
  headers: Record<string, string>,
  space: string,
  runs: number,
): Promise<SnapshotResult> {
  const result: SnapshotResult = { runs: [], heapPeakMiB: 0, unpaged: await unpaged(proc, space) };
  for (let i = 0; i < runs; i++) {
    const start = process.memoryUsage().heapUsed;
    let peak = start;
    const sampler = setInterval(() => void (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
    result.runs.push(await openOnce(`${base}/api/live?space=${space}&topics=sessions,values`, headers));
    clearInterval(sampler);
    result.heapPeakMiB = Math.max(result.heapPeakMiB, (peak - start) / 2 ** 20);
  }
  return result;
}

/** What asking for the whole snapshot in one bus message gives: its size, or the failure. */
async function unpaged(proc: PlatformProcess, space: string): Promise<string> {
  try {
    const answer = await call(
      proc.bus,
      liveSnapshot,
      { params: {}, query: {}, body: { connections: null, values: true } },
      { requestId: randomBytes(8).toString('hex'), space, timeoutMs: 60_000 },
    );
    return `answered (${(JSON.stringify(answer).length / 2 ** 20).toFixed(1)} MiB of JSON)`;
  } catch (err) {
    return `refused: ${(err as Error).message}`;
  }
}

/** One stream, read until its snapshot is complete. */
function openOnce(url: string, headers: Record<string, string>): Promise<SnapshotRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const headersMs = performance.now() - started;
      if (res.statusCode !== 200) return reject(new Error(`the stream answered ${res.statusCode}`));
      let firstByteMs = 0;
      const chunks: Buffer[] = [];
      let bytes = 0;
      let lastByte: Buffer = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstByteMs = performance.now() - started;
        chunks.push(chunk);
        bytes += chunk.length;
        // The snapshot is the first event: it ends at the first blank line, which may straddle two chunks.
        const seen = Buffer.concat([lastByte, chunk]).includes('\n\n');
        lastByte = chunk.subarray(-1);
        if (!seen) return;
        const snapshotMs = performance.now() - started;
        res.destroy();
        const text = Buffer.concat(chunks).toString('utf8');
        const event = text.slice(0, text.indexOf('\n\n') + 2);
        const data = event
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        const parsed = JSON.parse(data) as { sessions: unknown[]; values: unknown[] };
        resolve({
          headersMs,
          firstByteMs,
          snapshotMs,
          bytes: Buffer.byteLength(event),
          sessions: parsed.sessions.length,
          values: parsed.values.length,
        });
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
  });
}
