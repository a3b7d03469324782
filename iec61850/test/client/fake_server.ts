/**
 * A small in-process MMS server for the client tests: answers the COTP CR and the association (with the
 * captured libiec61850 frames by default), hands each confirmed request to a handler, answers conclude and
 * release, and counts its connections so a test can prove the client leaves none open. Faults are options:
 * stay silent, refuse, cut the output into tiny TCP segments.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { concat } from '../../src/mms/ber.ts';
import { createDtReassembler, decodeCotp, encodeData as encodeDt } from '../../src/mms/cotp.ts';
import { peelTsdu } from '../../src/mms/frames.ts';
import { encodeMmsPdu, type MmsPdu } from '../../src/mms/mms_pdu.ts';
import type { ConfirmedRequest } from '../../src/mms/mms_services.ts';
import { decodeUserData } from '../../src/mms/presentation.ts';
import { decodeSpdu } from '../../src/mms/session.ts';
import { createTpktDeframer, decodeTpkt, encodeTpkt } from '../../src/mms/tpkt.ts';
import { capturedFrames, fromHex } from '../mms/helpers.ts';
import { ccFrame, mmsFrame } from './pdus.ts';

/** The captured association accept (session ACCEPT, CPA, AARE accepted, initiate response). */
export const CAPTURED_ACCEPT = fromHex(
  '0300008f02f0800e8605061301001601021402000234020001c1743172a003800101a26b830400000001a512300780010081025101300780010081025101614f304d020101a0486146a107060528ca220203a203020100a305a103020100be2f282d020103a028a926800300fde881010582010583010aa416800101810305f100820c03ee1c000000000000000118',
);

/** The captured accept with the AARE result turned into a permanent rejection, diagnostic 13 (authentication failure). */
export const REFUSED_ACCEPT = fromHex(
  '0300008f02f0800e8605061301001601021402000234020001c1743172a003800101a26b830400000001a512300780010081025101300780010081025101614f304d020101a0486146a107060528ca220203a203020101a305a10302010dbe2f282d020103a028a926800300fde881010582010583010aa416800101810305f100820c03ee1c000000000000000118',
);

/** A confirmed request as the server saw it. */
export type Exchange = { invokeId: number; request: ConfirmedRequest; conn: FakeConnection };

/** How the fake server behaves; every field has a well-behaved default. */
export type FakeServerOptions = {
  /** The answer to a CR: a frame, or `silent`. */
  cc?: Uint8Array | 'silent';
  /** The answer to the association request: a frame, or `silent`. */
  accept?: Uint8Array | 'silent';
  /** MMS PDUs answering one request (nothing: no answer). */
  handle?(x: Exchange): Uint8Array[] | Uint8Array | void;
  /** Cuts what the server writes into TCP segments (default: one write per answer). */
  chunking?(bytes: Uint8Array): Uint8Array[];
};

/** One accepted connection. */
export type FakeConnection = {
  socket: Socket;
  /** MMS PDUs the client sent. */
  received: MmsPdu[];
  /** Largest DT TPDU (header included) the client sent. */
  largestDt: number;
  /** Sends MMS PDUs as frames, all in one write (then cut by `chunking`). */
  send(...pdus: Uint8Array[]): void;
  /** Sends whole frames. */
  sendFrames(...frames: Uint8Array[]): void;
};

/** A running fake server. */
export type FakeServer = {
  port: number;
  /** Connections open now. */
  readonly open: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  connections: FakeConnection[];
  close(): Promise<void>;
};

function writer(socket: Socket, chunking: FakeServerOptions['chunking']): (bytes: Uint8Array) => void {
  let chain = Promise.resolve();
  return (bytes) => {
    if (!chunking) return void (socket.destroyed || socket.write(bytes));
    // separate writes a tick apart so each chunk is its own TCP segment
    for (const c of chunking(bytes))
      chain = chain.then(() => new Promise<void>((r) => setTimeout(() => (socket.destroyed || socket.write(c), r()), 1)));
  };
}

function serve(socket: Socket, o: FakeServerOptions, conn: FakeConnection): void {
  const deframer = createTpktDeframer();
  const reassembler = createDtReassembler();
  const answer = (pdus: Uint8Array[] | Uint8Array | void) => {
    if (pdus === undefined) return;
    conn.send(...(pdus instanceof Uint8Array ? [pdus] : pdus));
  };
  socket.on('data', (chunk) => {
    for (const frame of deframer.push(chunk)) {
      const tpdu = decodeCotp(decodeTpkt(frame));
      if (tpdu.kind === 'CR') {
        if (o.cc !== 'silent') conn.sendFrames(o.cc ?? ccFrame());
        continue;
      }
      if (tpdu.kind !== 'DT') continue;
      conn.largestDt = Math.max(conn.largestDt, frame.length - 4);
      const tsdu = reassembler.push(tpdu);
      if (tsdu === undefined) continue;
      const p = peelTsdu(tsdu);
      if (p.session.kind === 'connect') {
        if (o.accept !== 'silent') conn.sendFrames(o.accept ?? CAPTURED_ACCEPT);
      } else if (p.session.kind === 'finish') {
        conn.sendFrames(encodeTpkt(encodeDt(Uint8Array.of(10, 0))));
      } else if (p.session.kind === 'abort') {
        socket.destroy();
      } else if (p.mms) {
        conn.received.push(p.mms);
        if (p.mms.pdu === 'conclude-request') answer(encodeMmsPdu({ pdu: 'conclude-response' }));
        if (p.mms.pdu === 'confirmed-request') answer(o.handle?.({ invokeId: p.mms.invokeId, request: p.mms.request, conn }));
      }
    }
  });
  socket.on('error', () => socket.destroy());
}

/** Starts a fake server on a free loopback port. */
export async function startFakeServer(o: FakeServerOptions = {}): Promise<FakeServer> {
  let open = 0;
  let accepted = 0;
  const connections: FakeConnection[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    open++;
    accepted++;
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on('close', () => {
      open--;
      sockets.delete(socket);
    });
    const write = writer(socket, o.chunking);
    const conn: FakeConnection = {
      socket,
      received: [],
      largestDt: 0,
      send: (...pdus) => write(concat(...pdus.map(mmsFrame))),
      sendFrames: (...frames) => write(concat(...frames)),
    };
    connections.push(conn);
    serve(socket, o, conn);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    get open() {
      return open;
    },
    get accepted() {
      return accepted;
    },
    connections,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Waits until `check` holds, polling every 5 ms, failing after `ms`. */
export async function until(check: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A request as comparable text (bytes as hex, whether Buffer or Uint8Array). */
export function requestKey(request: ConfirmedRequest): string {
  // the replacer sees a Buffer after its toJSON ran, so look at the holder's own value
  return JSON.stringify(request, function (this: Record<string, unknown>, k, v: unknown) {
    const raw = this[k];
    return raw instanceof Uint8Array ? Buffer.from(raw).toString('hex') : v;
  });
}

/** The captured basic-io session as request → answer PDUs (plus the reports sent right after). */
export type ReplayEntry = { request: string; response: Uint8Array; then: Uint8Array[] };

/** Replays captured answers: a request equal to a captured one gets the captured answer with the new invoke id. */
export function captureReplay(file = 'capture-basic-io.log'): ReplayEntry[] {
  const frames = capturedFrames().filter((f) => f.file === file);
  const out: ReplayEntry[] = [];
  const mmsBytesOf = (bytes: Uint8Array): Uint8Array | undefined => {
    const tpdu = decodeCotp(decodeTpkt(bytes));
    if (tpdu.kind !== 'DT') return undefined;
    const session = decodeSpdu(tpdu.data);
    return session.kind === 'data' ? decodeUserData(session.userData)[0]?.data : undefined;
  };
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i];
    if (f.direction !== 'C->S') continue;
    const tpdu = decodeCotp(decodeTpkt(f.bytes));
    if (tpdu.kind !== 'DT') continue;
    const mms = peelTsdu(tpdu.data).mms;
    if (mms?.pdu !== 'confirmed-request') continue;
    const answer = frames.slice(i + 1).find((g) => g.direction === 'S->C');
    if (!answer) continue;
    const response = mmsBytesOf(answer.bytes);
    if (!response) continue;
    const then: Uint8Array[] = [];
    for (let j = frames.indexOf(answer) + 1; j < frames.length && frames[j].direction === 'S->C'; j++) then.push(frames[j].bytes);
    out.push({ request: requestKey(mms.request), response, then });
  }
  return out;
}
