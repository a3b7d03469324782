import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { link, readFile, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { EnvReader } from './env.ts';
import { privateFolder, writePrivateFile } from './private_dir.ts';

/*
 * Secrets at rest: what a service must keep secret in its store (token-signing private keys and TOTP
 * secrets of the auth service, device passwords and TLS keys of the protocol service) is stored sealed
 * with AES-256-GCM under a key that is not in the database. A sealed value reads
 * `enc:v1:<key id>:<iv>:<ciphertext and tag>` (base64url); the key id names which key sealed it, so a
 * previous key still opens what it sealed while a new one takes over. Each value is bound to its row
 * (`purpose`, e.g. `totp:<user id>`) as additional data: a sealed value copied into another row does not open.
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

/** The secrets keys of the environment: the current one (null: the embedded mode's generated file) and previous ones. */
export type SecretsKeys = { current: Buffer | null; previous: Buffer[] };

/**
 * Reads `SECRETS_KEY_FILE` / `SECRETS_KEY` and `SECRETS_PREVIOUS_KEY_FILE` / `SECRETS_PREVIOUS_KEY`, the
 * one setting every service that seals secrets shares. With `DATABASE_URL` and no key, start-up stops:
 * `sealed` says what a database dump alone could otherwise be used for.
 */
export function readSecretsKeys(env: EnvReader): SecretsKeys {
  const current = readKey(env, 'SECRETS_KEY', 'SECRETS_KEY_FILE');
  if (current === null && env.optionalString('DATABASE_URL') !== undefined) {
    env.fail(
      'SECRETS_KEY_FILE or SECRETS_KEY: required with DATABASE_URL, so that a database dump alone can neither mint tokens, ' +
        'compute TOTP codes nor reach devices with their passwords and keys; make a key with `openssl rand -base64 32 > secrets.key` ' +
        '(or `node -e "console.log(crypto.randomBytes(32).toString(\'base64\'))"`), keep it outside the database (a Kubernetes ' +
        'Secret, a file only the platform can read) and set SECRETS_KEY_FILE to its path',
    );
  }
  const previous = readKey(env, 'SECRETS_PREVIOUS_KEY', 'SECRETS_PREVIOUS_KEY_FILE');
  return { current, previous: previous === null ? [] : [previous] };
}

/** A key given as `name` (base64 text) or `fileName` (a file holding it); null when neither is set. */
function readKey(env: EnvReader, name: string, fileName: string): Buffer | null {
  const text = env.optionalString(name);
  const file = env.optionalString(fileName);
  if (text !== undefined && file !== undefined) {
    env.fail(`${name}, ${fileName}: set one or the other`);
    return null;
  }
  if (file !== undefined) {
    let content: string;
    try {
      content = readFileSync(file, 'utf8');
    } catch (err) {
      env.fail(`${fileName}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      return null;
    }
    const key = parseSecretsKey(content);
    if (!key) env.fail(`${fileName}: ${file} must hold the base64 text of 32 random bytes`);
    return key;
  }
  if (text === undefined) return null;
  const key = parseSecretsKey(text);
  if (!key) env.fail(`${name}: must be the base64 text of 32 random bytes`);
  return key;
}

/**
 * The key that seals secrets at rest: the one configured, else, in the embedded mode,
 * `DATA_DIR/secrets.key`, generated on first start (0600 in the private data folder). Services of one
 * process may ask at once: the file appears whole or not at all (written aside, then linked into place),
 * so none reads it half written.
 */
export async function secretsKeyOf(configured: Buffer | null, dataDir: string, log: Logger): Promise<Buffer> {
  if (configured) return configured;
  const folder = resolve(dataDir);
  await privateFolder(folder, log);
  const file = join(folder, 'secrets.key');
  if (!existsSync(file)) {
    const aside = join(folder, `.secrets.key.${process.pid}.${randomBytes(6).toString('hex')}`);
    await writePrivateFile(aside, newSecretsKeyText());
    try {
      await link(aside, file);
      log.info({ file }, 'generated the secrets key: a copy of the data folder carries it (see SECRETS_KEY_FILE to keep it elsewhere)');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      await unlink(aside).catch(() => undefined);
    }
  }
  const key = parseSecretsKey(await readFile(file, 'utf8'));
  if (!key) throw new Error(`${file} does not hold the base64 text of 32 bytes: restore it, or set SECRETS_KEY_FILE to the key`);
  return key;
}
