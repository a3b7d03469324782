import type { Middleware } from 'koa';

/** One year, as the contract pins it. */
const hstsMaxAgeSeconds = 31_536_000;

/**
 * The headers the contract puts on every answer: `X-Content-Type-Options: nosniff` always;
 * `Strict-Transport-Security` when the client came over HTTPS (directly, or through a trusted proxy
 * that says so: `ctx.state.scheme`); `Cache-Control: no-store` on every answer whose route did not set
 * its own caching (API answers carry tokens or user data; only the documentation pages are cached).
 */
export function securityHeaders(): Middleware {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    try {
      await next();
    } finally {
      if ((ctx.state.scheme ?? ctx.protocol) === 'https') ctx.set('Strict-Transport-Security', `max-age=${hstsMaxAgeSeconds}`);
      if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', 'no-store');
    }
  };
}
