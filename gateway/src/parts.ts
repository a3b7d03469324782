/**
 * The gateway's hand-written parts that stand in front of a maintained library, exported for their
 * benchmark beside that library (bench/parts.bench.ts); nothing of the gateway imports this file.
 */
export { RateLimiter } from './auth/rate_limit.ts';
export { parseUrlencoded } from './input/body.ts';
export { clientIp } from './middleware/client_ip.ts';
export { Tallies } from './metrics.ts';
export { indexedRoutes } from './route_index.ts';
export { liveMessage } from './live/messages.ts';
