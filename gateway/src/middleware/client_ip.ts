import { foldAddress, ipAllowed, parseIpList, parseAddress, type IpFilter } from '@scada/contracts';
import type { Socket } from 'node:net';
import type { Middleware } from 'koa';

/**
 * Establishes the client address once per request, as `ctx.state.clientIp`: the socket's peer with
 * IPv4-mapped IPv6 folded to IPv4; when the peer is a trusted proxy, the rightmost `X-Forwarded-For`
 * entry that is not itself a trusted proxy. A malformed forwarded entry makes the header untrusted.
 * Likewise the scheme the client used, as `ctx.state.scheme`: `https` on a TLS socket, or when a trusted
 * proxy's `X-Forwarded-Proto` says so. The peer of a connection is worked out once for all the requests
 * it carries (parsing an address was a tenth of a request's time). Kept by measure beside proxy-addr,
 * which parses the peer's address again on every request: 2.4–2.6 × (medians of three runs) as many a second,
 * bench/parts.bench.ts, 2026-11-26; proxy-addr would also take a malformed forwarded entry as an address.
 */
export function clientIp(trustedProxies: readonly string[]): Middleware {
  const trusted: IpFilter = { allowed: parseIpList(trustedProxies.join(' '), 'TRUSTED_PROXIES').rules, denied: [] };
  const isTrusted = (address: string) => trusted.allowed.length > 0 && ipAllowed(trusted, address);
  const peers = new WeakMap<Socket, { peer: string; viaProxy: boolean }>();
  const peerOf = (socket: Socket) => {
    let known = peers.get(socket);
    if (!known) {
      const peer = foldAddress(socket.remoteAddress ?? '');
      known = { peer, viaProxy: isTrusted(peer) };
      peers.set(socket, known);
    }
    return known;
  };
  return (ctx, next) => {
    // Not async: it does nothing after `next`, and an async frame a request is garbage for nothing (a throw
    // here still reaches the problem middleware as a rejection: koa-compose turns it into one).
    const { peer, viaProxy } = peerOf(ctx.req.socket);
    ctx.state.clientIp = viaProxy ? (fromForwarded(ctx.get('x-forwarded-for'), isTrusted) ?? peer) : peer;
    ctx.state.scheme = viaProxy ? (forwardedProto(ctx.get('x-forwarded-proto')) ?? ctx.protocol) : ctx.protocol;
    return next();
  };
}

/** How many forwarded entries, from the right, are looked at: more trusted proxies than this in a row is no real chain. */
const maxHops = 64;

/**
 * The client a chain of trusted proxies reports: the rightmost `X-Forwarded-For` entry that is not itself a
 * trusted proxy. Only the right end is read (the entries the proxies appended; everything left of the
 * first untrusted one is the client's own text), so no number of entries the client sends in front can
 * change the answer. Null when an entry it reads is not an address.
 */
function fromForwarded(header: string, isTrusted: (address: string) => boolean): string | null {
  if (!header) return null;
  const hops = header.split(',');
  let client: string | null = null;
  for (let i = hops.length - 1; i >= 0 && i >= hops.length - maxHops; i--) {
    const hop = (hops[i] ?? '').trim();
    if (!parseAddress(hop)) return null;
    client = foldAddress(hop);
    if (!isTrusted(client)) return client;
  }
  return client;
}

/** The scheme a trusted proxy reports (its last value, the one it set itself); null when none is usable. */
function forwardedProto(header: string): 'http' | 'https' | null {
  const last = header.split(',').pop()?.trim().toLowerCase();
  return last === 'http' || last === 'https' ? last : null;
}
