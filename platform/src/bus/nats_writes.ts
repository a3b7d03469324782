import { setImmediate } from 'node:timers';
import type { NatsConnection } from '@nats-io/nats-core';

/**
 * The part of the NATS client's protocol handler this module changes (`@nats-io/nats-core`, pinned): the
 * method that writes what is queued for the server to the socket in one write.
 */
type Protocol = { flushPending: () => void };

/**
 * Writes to the server once a turn of the event loop, not once a request. The client writes what it has
 * queued at the end of the current task (a microtask), so under load every request and every reply cost a
 * socket write of its own: a write to a local socket is a system call that also runs the receiving side's
 * TCP, 20–30 % of a gateway's or a service's CPU under 32 connections. Deferred to the loop's check phase
 * (`setImmediate`), the requests of every socket that was read in the same turn leave in one write, in the
 * order they were queued; a request waits at most for the turn it was made in to end (the loop does not
 * block while a callback waits there). A ping (`flush()`, and the drain before a close) is written the
 * same way and still waits for its pong, so nothing queued is lost on the way to a close.
 */
export function writeOncePerTurn(nc: NatsConnection): void {
  const protocol = (nc as unknown as { protocol?: Protocol }).protocol;
  if (typeof protocol?.flushPending !== 'function') return;
  const write = protocol.flushPending.bind(protocol);
  const before: (() => void)[] = [];
  let scheduled = false;
  const writeQueued = (): void => {
    // What asked to join this turn's write queues its messages first: `scheduled` is still set, so they
    // ask for no write of their own and leave in this one.
    for (let i = 0; i < before.length; i++) {
      try {
        (before[i] as () => void)();
      } catch {
        // Its own failure, which it reports itself: the turn's write still goes out.
      }
    }
    before.length = 0;
    scheduled = false;
    write();
  };
  protocol.flushPending = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(writeQueued);
  };
  turnWrites.set(nc, (fn) => {
    before.push(fn);
    protocol.flushPending();
  });
}

/** Per connection that writes once a turn: how to run work just before the turn's write. */
const turnWrites = new WeakMap<NatsConnection, (fn: () => void) => void>();

/**
 * Runs `fn` at the end of the event loop's current turn, just before the connection's one write of the
 * turn (`writeOncePerTurn`), so that what it sends leaves in that write; work that several callbacks of
 * the turn ask for is done once for all of them. False, and `fn` not taken, for a connection that does
 * not write once a turn.
 */
export function atTurnWrite(nc: NatsConnection, fn: () => void): boolean {
  const join = turnWrites.get(nc);
  if (join === undefined) return false;
  join(fn);
  return true;
}
