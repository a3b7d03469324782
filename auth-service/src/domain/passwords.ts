import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** OWASP's scrypt parameters: N=2^17, r=8, p=1 (128 MiB per hash); `maxmem` leaves room above that. */
const cost = { log2N: 17, r: 8, p: 1 };
const keyLength = 32;
const maxmem = 256 * 1024 * 1024;

/** Passwords the platform accepts: 8 to 1024 characters, used whole. */
export const passwordLength = { min: 8, max: 1024 };

function derive(password: string, salt: Buffer, params: { log2N: number; r: number; p: number }, length: number): Promise<Buffer> {
  const options: ScryptOptions = { N: 2 ** params.log2N, r: params.r, p: params.p, maxmem };
  // node:crypto runs scrypt on the libuv pool, off the event loop.
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, length, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** Hashes a password into a PHC string `$scrypt$ln=17,r=8,p=1$<salt>$<hash>` (unpadded base64). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost, keyLength);
  return `$scrypt$ln=${cost.log2N},r=${cost.r},p=${cost.p}$${salt.toString('base64').replace(/=+$/, '')}$${key.toString('base64').replace(/=+$/, '')}`;
}

/** Checks a password against a PHC string in constant time; a malformed string never matches. */
export async function verifyPassword(password: string, phc: string): Promise<boolean> {
  const match = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(phc);
  if (!match) return false;
  const [, ln, r, p, saltText, hashText] = match;
  const expected = Buffer.from(hashText as string, 'base64');
  const key = await derive(password, Buffer.from(saltText as string, 'base64'), { log2N: Number(ln), r: Number(r), p: Number(p) }, expected.length);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

let dummy: Promise<string> | null = null;

/**
 * Spends the time of a real check on a password that cannot match, so that an unknown username (or a
 * password of a length that is never stored) answers as slowly as a wrong password.
 */
export async function burnPasswordCheck(password: string): Promise<false> {
  dummy ??= hashPassword(randomBytes(24).toString('base64'));
  await verifyPassword(password.slice(0, passwordLength.max * 4), await dummy);
  return false;
}
