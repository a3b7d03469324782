import { randomBytes, timingSafeEqual } from 'node:crypto';
import { generateSync, generateURI } from 'otplib';
import { ScureBase32Plugin } from 'otplib';

const period = 30;
const base32 = new ScureBase32Plugin();

/** A new TOTP secret: 160 bits from the CSPRNG, base32 as authenticator apps expect. */
export function newTotpSecret(): string {
  return base32.encode(randomBytes(20), { padding: false });
}

/** The otpauth:// URL an authenticator app scans. */
export function totpUrl(secret: string, username: string): string {
  return generateURI({ strategy: 'totp', issuer: 'SCADA platform', label: username, secret });
}

/**
 * Checks a 6-digit code (RFC 6238, 30 s, SHA-1) against the current step and one step back, never a
 * step at or before `lastStep`, so that no code works twice. Answers the matched step, or null.
 */
export function matchTotp(secret: string, code: string, lastStep: number | null, nowMs = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const current = Math.floor(nowMs / 1000 / period);
  for (const step of [current, current - 1]) {
    if (lastStep !== null && step <= lastStep) continue;
    const expected = generateSync({ strategy: 'totp', secret, epoch: step * period, period });
    if (constantEqual(expected, code)) return step;
  }
  return null;
}

function constantEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
