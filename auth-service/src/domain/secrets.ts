import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/*
 * Secrets at rest: token-signing private keys and TOTP secrets are stored sealed with AES-256-GCM under a
 * key that is not in the database. A sealed value reads `enc:v1:<key id>:<iv>:<ciphertext and tag>`
 * (base64url); the key id names which key sealed it, so a previous key still opens what it sealed while a
 * new one takes over. Each value is bound to its row (`purpose`, e.g. `totp:<user id>`) as additional
 * data: a sealed value copied into another row does not open.
 */

const prefix = 'enc:v1:';
const keyBytes = 32;
const ivBytes = 12;
const tagBytes = 16;

/** A key of 32 bytes, from its base64 text; null when the text is not one. */
export function parseSecretsKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return null;
  const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return key.length === keyBytes ? key : null;
}

/** A new random key, as the base64 text a key file holds. */
export function newSecretsKeyText(): string {
  return `${randomBytes(keyBytes).toString('base64')}\n`;
}

/** Seals and opens secrets with the current key; previous keys only open. */
export type SecretBox = {
  seal(plain: string, purpose: string): string;
  /** The plain value; throws when the value is not sealed, or sealed under a key this box does not hold. */
  open(sealed: string, purpose: string): string;
  /** Whether a stored value is sealed at all (rows written before sealing are not). */
  isSealed(value: string): boolean;
  /** Whether a sealed value is sealed under the current key (else it is re-sealed at start-up). */
  isCurrent(value: string): boolean;
};

function keyId(key: Buffer): string {
  return createHash('sha256').update('scada secrets key id').update(key).digest('base64url').slice(0, 11);
}

/** A box over the current key and any previous ones. */
export function secretBox(current: Buffer, previous: Buffer[] = []): SecretBox {
  const currentId = keyId(current);
  const keys = new Map([[currentId, current], ...previous.map((k) => [keyId(k), k] as const)]);
  return {
    seal(plain, purpose) {
      const iv = randomBytes(ivBytes);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(purpose));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${prefix}${currentId}:${iv.toString('base64url')}:${body.toString('base64url')}`;
    },
    open(sealed, purpose) {
      if (!sealed.startsWith(prefix)) throw new Error('the value is not sealed');
      const [id, ivText, bodyText] = sealed.slice(prefix.length).split(':');
      const key = keys.get(id ?? '');
      if (!key) throw new Error(`the value is sealed under a key this process does not hold (key id ${id})`);
      const body = Buffer.from(bodyText ?? '', 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivText ?? '', 'base64url'));
      decipher.setAAD(Buffer.from(purpose));
      decipher.setAuthTag(body.subarray(body.length - tagBytes));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - tagBytes)), decipher.final()]).toString('utf8');
    },
    isSealed: (value) => value.startsWith(prefix),
    isCurrent: (value) => value.startsWith(`${prefix}${currentId}:`),
  };
}

/** The purpose a user's TOTP secret is sealed for. */
export function totpPurpose(userId: string): string {
  return `totp:${userId}`;
}

/** The purpose a signing key's private part is sealed for. */
export function signingKeyPurpose(kid: string): string {
  return `signing-key:${kid}`;
}
