import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { privateFolder, writePrivateFile } from '@scada/platform';
import type { Logger } from 'pino';
import type { AuthConfig } from './config.ts';
import { newSecretsKeyText, parseSecretsKey } from './domain/secrets.ts';

/**
 * The key that seals secrets at rest: the one configured (`SECRETS_KEY_FILE` / `SECRETS_KEY`), else, in
 * the embedded mode, `DATA_DIR/secrets.key`, generated on first start (0600 in the private data folder).
 */
export async function secretsKeyOf(config: AuthConfig, log: Logger): Promise<Buffer> {
  if (config.secretsKey) return config.secretsKey;
  const folder = resolve(config.dataDir);
  await privateFolder(folder, log);
  const file = join(folder, 'secrets.key');
  if (!existsSync(file)) {
    try {
      await writePrivateFile(file, newSecretsKeyText());
      log.info({ file }, 'generated the secrets key: a copy of the data folder carries it (see SECRETS_KEY_FILE to keep it elsewhere)');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const key = parseSecretsKey(await readFile(file, 'utf8'));
  if (!key) throw new Error(`${file} does not hold the base64 text of 32 bytes: restore it, or set SECRETS_KEY_FILE to the key`);
  return key;
}
