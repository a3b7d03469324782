import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Actor } from '@scada/contracts';
import type { Logger } from 'pino';
import type { Session } from '../auth/session.ts';

const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id: the client's `X-Request-Id` when it is a sane token, a new UUID otherwise.
 * The id is answered in `X-Request-Id`, carried in bus headers, and bound to the request's logger
 * (`ctx.state.log`), which is built the first time something logs through it: most requests log only
 * their access line, which names the id itself.
 */
export function requestId(log: Logger): Middleware {
  return async (ctx, next) => {
    const offered = ctx.get('x-request-id');
    const id = acceptable.test(offered) ? offered : randomUUID();
    ctx.state = new RequestState(id, log);
    ctx.set('X-Request-Id', id);
    await next();
  };
}

/** What the gateway's middleware know of a request, as `ctx.state` (Koa's `DefaultState`, below). */
export interface GatewayState {
  /** The request's id (`X-Request-Id`). */
  readonly requestId: string;
  /** The request's logger, bound to its id. */
  readonly log: Logger;
  /** The client's address (`clientIp` middleware, which runs before anything reads it; empty until then). */
  clientIp: string;
  /** The scheme the client used, `http` or `https` (`clientIp` middleware). */
  scheme: string | undefined;
  /** Who asks, once an operation's access rule has passed (`authorize`). */
  actor: Actor | undefined;
  /** The space the request works in, for a space-scoped operation (`authorize`). */
  space: string | undefined;
  /** The caller's session, once resolved (null: none); absent until something asked. */
  session?: Session | null;
}

declare module 'koa' {
  interface DefaultState extends GatewayState {}
}

/**
 * A request's state: its id, and its logger built on first use. A class with a getter costs a request
 * less than defining the getter on Koa's plain state object.
 */
class RequestState implements GatewayState {
  readonly requestId: string;
  // Set by later middleware; declared here so that every request's state has one shape from the start
  // (properties added one by one made V8 move each state object to a new layout).
  clientIp = '';
  scheme: string | undefined = undefined;
  actor: Actor | undefined = undefined;
  space: string | undefined = undefined;
  readonly #log: Logger;
  #child: Logger | undefined;

  constructor(id: string, log: Logger) {
    this.requestId = id;
    this.#log = log;
  }

  get log(): Logger {
    return (this.#child ??= this.#log.child({ reqId: this.requestId }));
  }
}
