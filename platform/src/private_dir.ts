import { chmod, mkdir, open, stat } from 'node:fs/promises';
import type { Logger } from 'pino';

/**
 * Makes a folder private to this user, whatever the process umask: created 0700, or, when it exists with
 * looser modes, tightened to 0700 with a warning. Whatever lies inside (the embedded database, keys,
 * certificates) is then out of reach of the machine's other users.
 */
export async function privateFolder(path: string, log?: Logger): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  const { mode } = await stat(path);
  if ((mode & 0o077) !== 0) {
    await chmod(path, 0o700);
    log?.warn({ folder: path, was: (mode & 0o777).toString(8) }, 'tightened a data folder other users could reach to 0700');
  }
}

/** Writes a new file only its owner can read (0600 whatever the umask); fails when the file exists. */
export async function writePrivateFile(path: string, content: string | Uint8Array): Promise<void> {
  const file = await open(path, 'wx', 0o600);
  try {
    await file.chmod(0o600);
    await file.writeFile(content);
    await file.sync();
  } finally {
    await file.close();
  }
}
