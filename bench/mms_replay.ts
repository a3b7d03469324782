/**
 * What a server can answer at most, whatever the client: the platform's own read request, recorded once
 * on its way to the server, then written again and again by a bare socket that decodes nothing (it counts
 * TPKT frames), with a given number in flight. A client that reads as fast as this has reached the
 * server's pace; no client can pass it by much.
 */
import { connect, createServer, type Socket } from 'node:net';
import { MmsClient } from '@scada/iec61850';

/** The TPKT frames in `data` (each whole): what a client sent, one frame a request. */
function frames(data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at + 4 <= data.length; ) {
    const length = data.readUInt16BE(at + 2);
    out.push(data.subarray(at, at + length));
    at += length;
  }
  return out;
}

/**
 * The frames the platform's client sends to read `ref` once on a new association, through a relay on
 * loopback: the connect request, the association request, then the read.
 */
export async function recordRead(host: string, port: number, ref: string): Promise<{ connect: Buffer; associate: Buffer; read: Buffer }> {
  const sent: Buffer[] = [];
  const relay = createServer((client) => {
    const server = connect(port, host);
    client.on('data', (d: Buffer) => {
      sent.push(d);
      server.write(d);
    });
    server.on('data', (d: Buffer) => client.write(d));
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
    client.on('error', () => undefined);
    server.on('error', () => undefined);
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', () => r()));
  try {
    const client = await MmsClient.connect({ host: '127.0.0.1', port: (relay.address() as { port: number }).port, maxOutstanding: 5 });
    await client.read([ref]);
    await client.conclude();
  } finally {
    relay.close();
  }
  const [cr, aarq, read] = frames(Buffer.concat(sent));
  if (!cr || !aarq || !read) throw new Error('the read was not recorded');
  return { connect: cr, associate: aarq, read };
}

/** Answers per second to `read` written again by a bare socket, `outstanding` in flight, for `ms`. */
export async function replayReads(
  host: string,
  port: number,
  recorded: { connect: Buffer; associate: Buffer; read: Buffer },
  outstanding: number,
  ms: number,
): Promise<number> {
  const socket: Socket = connect(port, host);
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let pending: Buffer = Buffer.alloc(0);
  let onFrames: (n: number) => void = () => undefined;
  socket.on('data', (d: Buffer) => {
    pending = pending.length > 0 ? Buffer.concat([pending, d]) : d;
    let n = 0;
    while (pending.length >= 4 && pending.length >= pending.readUInt16BE(2)) {
      pending = pending.subarray(pending.readUInt16BE(2));
      n++;
    }
    if (n > 0) onFrames(n);
  });
  const answer = () => new Promise<void>((r) => (onFrames = () => r()));
  try {
    for (const frame of [recorded.connect, recorded.associate]) {
      const answered = answer();
      socket.write(frame);
      await answered;
    }
    let sent = 0;
    let answered = 0;
    const started = performance.now();
    const end = started + ms;
    const rate = await new Promise<number>((resolve) => {
      onFrames = (n) => {
        answered += n;
        if (performance.now() < end) {
          // as many written again as were answered, in one write
          socket.write(n === 1 ? recorded.read : Buffer.concat(Array.from({ length: n }, () => recorded.read)));
          sent += n;
        } else if (answered >= sent) resolve(answered / ((performance.now() - started) / 1000));
      };
      socket.write(Buffer.concat(Array.from({ length: outstanding }, () => recorded.read)));
      sent = outstanding;
    });
    return rate;
  } finally {
    socket.destroy();
  }
}
