import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * scrypt's log2 N for new hashes: OWASP's N=2^15, r=8, p=3, which takes 32 MiB while it runs. OWASP's
 * Password Storage Cheat Sheet lists it as of equal strength to N=2^17, p=1 (128 MiB, the default before):
 * the work is the same, spread over three passes that each need a quarter of the memory.
 */
export const defaultHashCost = 15;
/** The lowest cost production may choose: OWASP's table goes down to N=2^13 (with p=10). */
export const lowestHashCost = 13;
/** The highest cost any run may choose (128 MiB times 8: 1 GiB per hash). */
export const highestHashCost = 20;
/** The lowest cost a test run may choose (`NODE_ENV=test`): cheap hashes for fast suites, never in production. */
export const lowestTestHashCost = 10;
const blockSize = 8;
const keyLength = 32;

/**
 * OWASP's equal-strength settings by log2 N (r=8): the parallelism that makes up for a smaller N, so that
 * every cost from 13 to 17 asks the same work of an attacker. From 17 up p=1 (more N is more strength);
 * below 13 (test runs only) p=1, cheap on purpose.
 */
const owaspParallelism: Record<number, number> = { 13: 10, 14: 5, 15: 3, 16: 2, 17: 1 };

/** The parallelism new hashes at 2^`log2N` are made with. */
export function parallelismFor(log2N: number): number {
  return owaspParallelism[log2N] ?? 1;
}

/** Passwords the platform accepts: 8 to 1024 characters, used whole. */
export const passwordLength = { min: 8, max: 1024 };

type Params = { log2N: number; r: number; p: number };

function derive(password: string, salt: Buffer, params: Params, length: number): Promise<Buffer> {
  // Room for the hash's own memory (128 * N * r bytes; the p passes run one after another, each with
  // 128 * r bytes of its own) and a little more; each hash keeps its own cost.
  const options: ScryptOptions = {
    N: 2 ** params.log2N,
    r: params.r,
    p: params.p,
    maxmem: 256 * 2 ** params.log2N * params.r + 1024 * 1024,
  };
  // node:crypto runs scrypt on the libuv pool, off the event loop.
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, length, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Password hashing at one cost for new hashes; checks read the cost from each stored hash. */
export type Passwords = {
  /** Hashes into a PHC string `$scrypt$ln=<cost>,r=8,p=<parallelism>$<salt>$<hash>` (unpadded base64). */
  hash(password: string): Promise<string>;
  /** Checks a password against a PHC string in constant time; a malformed string never matches. */
  verify(password: string, phc: string): Promise<boolean>;
  /**
   * Spends the time of a real check on a password that cannot match, so that an unknown username (or a
   * password of a length that is never stored) answers as slowly as a wrong password: at the cost of the
   * stored hash `like` names (a PHC string or its start, e.g. `$scrypt$ln=17,r=8,p=1$`), or at the cost
   * of new hashes.
   */
  burn(password: string, like?: string): Promise<false>;
  /** Makes the hash `burn` checks against, once; answers how long that hash took (ms). */
  prepare(): Promise<number>;
  /** Whether a stored hash was made at the cost new hashes are made at (false: hash it again when the password is at hand). */
  current(phc: string): boolean;
};

/**
 * Hashing with scrypt at 2^`log2N` (`PASSWORD_HASH_COST`, 15 unless told) and the parallelism OWASP pairs
 * with it ({@link parallelismFor}).
 */
export function passwords(log2N = defaultHashCost): Passwords {
  const params = { log2N, r: blockSize, p: parallelismFor(log2N) };
  const hash = async (password: string) => {
    const salt = randomBytes(16);
    const key = await derive(password, salt, params, keyLength);
    return `$scrypt$ln=${params.log2N},r=${params.r},p=${params.p}$${unpadded(salt)}$${unpadded(key)}`;
  };
  const prefix = phcParams(params);
  /** One hash of a random password per cost that `burn` was asked for, made at its first use. */
  const dummies = new Map<string, Promise<string>>();
  const dummyAt = (at: Params): Promise<string> => {
    const name = phcParams(at);
    let dummy = dummies.get(name);
    if (dummy === undefined) {
      const made = (async () => {
        const salt = randomBytes(16);
        const key = await derive(randomBytes(24).toString('base64'), salt, at, keyLength);
        return `${name}${unpadded(salt)}$${unpadded(key)}`;
      })();
      dummy = made.catch((err: unknown) => {
        dummies.delete(name);
        throw err;
      });
      dummies.set(name, dummy);
    }
    return dummy;
  };
  return {
    hash,
    current: (phc) => phc.startsWith(prefix),
    verify: verifyPassword,
    prepare: async () => {
      const started = performance.now();
      await dummyAt(params);
      return performance.now() - started;
    },
    burn: async (password, like) => {
      const dummy = await dummyAt((like !== undefined ? paramsOf(like) : null) ?? params);
      await verifyPassword(password.slice(0, passwordLength.max * 4), dummy);
      return false;
    },
  };
}

/** Checks a password against a PHC string in constant time, at the cost the string names. */
export async function verifyPassword(password: string, phc: string): Promise<boolean> {
  const match = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(phc);
  if (!match) return false;
  const [, ln, r, p, saltText, hashText] = match;
  const expected = Buffer.from(hashText as string, 'base64');
  const key = await derive(
    password,
    Buffer.from(saltText as string, 'base64'),
    { log2N: Number(ln), r: Number(r), p: Number(p) },
    expected.length,
  );
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** The start of a PHC string made at `params`: `$scrypt$ln=15,r=8,p=3$`. */
function phcParams(params: Params): string {
  return `$scrypt$ln=${params.log2N},r=${params.r},p=${params.p}$`;
}

/**
 * The cost a PHC string (or its start) names, when it is one this platform could have made (ln 10 to 20,
 * r 8, p 1 to 10); null otherwise.
 */
export function paramsOf(phc: string): Params | null {
  const match = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$/.exec(phc);
  if (!match) return null;
  const log2N = Number(match[1]);
  const r = Number(match[2]);
  const p = Number(match[3]);
  return log2N >= 10 && log2N <= 20 && r === blockSize && p >= 1 && p <= 10 ? { log2N, r, p } : null;
}

function unpadded(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}
