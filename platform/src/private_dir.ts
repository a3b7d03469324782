import { chmod, lstat, mkdir, open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';

/** The permission bits of group and others. */
const groupAndOthers = 0o077;

/**
 * Makes a folder private to this user, whatever the process umask: created 0700, or, when it exists with
 * looser modes, tightened to 0700 with a warning. Whatever lies inside (the embedded database, keys,
 * certificates) is then out of reach of the machine's other users.
 */
export async function privateFolder(path: string, log?: Logger): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  const { mode } = await stat(path);
  if ((mode & groupAndOthers) !== 0) {
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

/**
 * Takes every permission of group and others from a folder and everything under it, files and folders
 * alike (a symbolic link is neither followed nor changed): for a tree an older version left readable to
 * other users. Owner bits stay as they were. Answers how many entries it tightened; a missing folder has none.
 */
export async function tightenTree(path: string): Promise<number> {
  let info: Awaited<ReturnType<typeof lstat>>;
  try {
    info = await lstat(path);
  } catch (err) {
    // Gone between the listing and the look (or never there): nothing to tighten.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  if (info.isSymbolicLink()) return 0;
  let tightened = 0;
  if ((info.mode & groupAndOthers) !== 0) {
    await chmod(path, info.mode & 0o7777 & ~groupAndOthers);
    tightened++;
  }
  if (!info.isDirectory()) return tightened;
  const counts = await Promise.all((await readdir(path)).map((name) => tightenTree(join(path, name))));
  return counts.reduce((sum, n) => sum + n, tightened);
}
