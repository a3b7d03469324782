import type { Context } from 'koa';

/**
 * Sets a JSON answer as its text. Koa serialises an object body itself, but first tests it against the web
 * `Response` class, and the first use of that class loads Node's whole fetch implementation: some 12 MiB
 * more in every gateway, for a class it never uses. Every answer of the gateway's own goes through here.
 */
export function setJson(ctx: Context, value: unknown, type = 'application/json'): void {
  ctx.type = type;
  ctx.body = JSON.stringify(value);
}
