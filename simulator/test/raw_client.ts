/**
 * A bare MMS client for the simulator tests: a socket, the codec's frame builders, and a list of what came
 * back (CC, peeled TSDUs, MMS PDUs) that a test waits on. No retries, no state machine: tests drive it.
 */
import { connect, type Socket } from 'node:net';
import {
  buildAssociationRequest,
  buildConnectionRequest,
  buildMmsFrames,
  createDtReassembler,
  createTpktDeframer,
  decodeCotp,
  decodeTpkt,
  peelTsdu,
  type ConfirmedRequest,
  type ConfirmedResponse,
  type InformationReport,
  type MmsPdu,
  type PeeledTsdu,
} from '@scada/iec61850/wire';

/** Something the client received. */
export type Received = { kind: 'cc' } | { kind: 'tsdu'; peeled: PeeledTsdu; frames: Uint8Array[] } | { kind: 'bad'; message: string };

/** A raw connection to a simulator. */
export class RawClient {
  readonly socket: Socket;
  readonly received: Received[] = [];
  readonly closed: Promise<void>;
  #waiters: (() => void)[] = [];
  #invokeId = 0;
  #frames: Uint8Array[] = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    const deframer = createTpktDeframer();
    const reassembler = createDtReassembler();
    this.closed = new Promise((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const frame of deframer.push(new Uint8Array(chunk))) {
          const cotp = decodeCotp(decodeTpkt(frame));
          if (cotp.kind === 'CC') this.received.push({ kind: 'cc' });
          if (cotp.kind !== 'DT') continue;
          this.#frames.push(frame);
          const tsdu = reassembler.push(cotp);
          if (tsdu === undefined) continue;
          this.received.push({ kind: 'tsdu', peeled: peelTsdu(tsdu), frames: this.#frames });
          this.#frames = [];
        }
      } catch (e) {
        this.received.push({ kind: 'bad', message: e instanceof Error ? e.message : String(e) });
      }
      for (const w of this.#waiters.splice(0)) w();
    });
  }

  /** Opens a TCP connection. */
  static open(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Opens a connection and an association (CR/CC, CONNECT/ACCEPT); returns the peeled ACCEPT. */
  static async associated(port: number): Promise<RawClient> {
    const client = await RawClient.open(port);
    client.write(buildConnectionRequest());
    await client.take((r) => r.kind === 'cc');
    client.write(buildAssociationRequest());
    const accept = await client.take((r) => r.kind === 'tsdu');
    if (accept.kind !== 'tsdu' || accept.peeled.acse?.kind !== 'AARE' || accept.peeled.acse.result !== 0)
      throw new Error('association not accepted');
    return client;
  }

  write(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** Waits for (and removes) the first received item that matches. */
  async take(match: (r: Received) => boolean, timeoutMs = 2000): Promise<Received> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.received.findIndex(match);
      if (at >= 0) return this.received.splice(at, 1)[0];
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`nothing matching arrived within ${timeoutMs} ms (${this.received.length} other items)`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for the next MMS PDU that matches. */
  async mms(match: (p: MmsPdu) => boolean, timeoutMs = 2000): Promise<MmsPdu> {
    const r = await this.take((x) => x.kind === 'tsdu' && x.peeled.mms !== undefined && match(x.peeled.mms), timeoutMs);
    if (r.kind !== 'tsdu' || !r.peeled.mms) throw new Error('unreachable');
    return r.peeled.mms;
  }

  /** Sends a confirmed request and waits for its response, error or reject. */
  async request(request: ConfirmedRequest): Promise<MmsPdu> {
    const invokeId = ++this.#invokeId;
    for (const f of buildMmsFrames({ pdu: 'confirmed-request', invokeId, request })) this.write(f);
    return this.mms(
      (p) => (p.pdu === 'confirmed-response' || p.pdu === 'confirmed-error' || p.pdu === 'reject') && p.invokeId === invokeId,
    );
  }

  /** Sends a confirmed request and returns its response; throws on an error or reject. */
  async ok(request: ConfirmedRequest): Promise<ConfirmedResponse> {
    const p = await this.request(request);
    if (p.pdu !== 'confirmed-response') throw new Error(`request refused: ${JSON.stringify(p)}`);
    return p.response;
  }

  /** The next information report (optionally: with this first variable name). */
  async report(item?: string, timeoutMs = 2000): Promise<InformationReport> {
    const p = await this.mms((x) => {
      if (x.pdu !== 'information-report') return false;
      if (item === undefined) return true;
      const v = x.report.variables;
      return v.kind === 'list' ? v.name.item === item : v.names[0]?.item === item;
    }, timeoutMs);
    if (p.pdu !== 'information-report') throw new Error('unreachable');
    return p.report;
  }

  /** Closes the socket and waits for it. */
  async close(): Promise<void> {
    this.socket.destroy();
    await this.closed;
  }
}

/** Polls until `check` holds or the time is up. */
export async function eventually(check: () => boolean, timeoutMs = 2000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}
