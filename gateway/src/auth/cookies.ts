import type { Context } from 'koa';

/** Names of the session cookies, as the contract fixes them. */
export const cookieNames = {
  access: 'svc_access_token',
  refresh: 'svc_refresh_token',
  otp: 'svc_otp_token',
} as const;

/**
 * Sets a session cookie exactly as the contract words it: `Path=/; Max-Age=<s>; HttpOnly; SameSite=Lax`,
 * plus `Secure` over HTTPS. Written by hand because Koa's cookie helper sends `Expires`, not `Max-Age`.
 * Values are JWTs or base64url, which need no quoting.
 */
export function setSessionCookie(ctx: Context, name: string, value: string, maxAgeSeconds: number): void {
  const secure = ctx.protocol === 'https' ? '; Secure' : '';
  ctx.append('Set-Cookie', `${name}=${value}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; SameSite=Lax${secure}`);
}

/** Clears a session cookie with `Max-Age=0`. */
export function clearSessionCookie(ctx: Context, name: string): void {
  setSessionCookie(ctx, name, '', 0);
}

/** Sets both session cookies from a grant. */
export function setSessionCookies(
  ctx: Context,
  grant: { access_token: string; refresh_token: string; 'expire-seconds': number; 'refresh-expire-seconds': number },
): void {
  setSessionCookie(ctx, cookieNames.access, grant.access_token, grant['expire-seconds']);
  setSessionCookie(ctx, cookieNames.refresh, grant.refresh_token, grant['refresh-expire-seconds']);
}
