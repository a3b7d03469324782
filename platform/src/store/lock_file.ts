import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** A held lock on a data folder; `release()` removes the lock file. */
export type FolderLock = { readonly path: string; release(): Promise<void> };

/** Thrown when another live process (or this one) already holds the data folder. */
export class FolderLockedError extends Error {
  readonly lockPath: string;
  readonly ownerPid: number;
  constructor(folder: string, lockPath: string, ownerPid: number) {
    const who = ownerPid === process.pid ? 'this process' : `process ${ownerPid}`;
    super(
      `data folder ${folder} is in use by ${who} (lock file ${lockPath}); stop it, or delete the lock file if that process is not a platform`,
    );
    this.name = 'FolderLockedError';
    this.lockPath = lockPath;
    this.ownerPid = ownerPid;
  }
}

type Owner = { pid: number; startedAt: number };

/**
 * Takes `<folder>/<name>.lock`, created exclusively with the owner's pid (first line) and the start time
 * of its process (second line). A lock whose pid is alive refuses with {@link FolderLockedError}; a lock
 * whose pid is dead is stale and taken over. The start time tells a restarted container, whose process
 * gets the same pid as its predecessor, from a second opening in the same process.
 */
export async function lockFolder(folder: string, name: string): Promise<FolderLock> {
  const path = join(folder, `${name}.lock`);
  const me: Owner = { pid: process.pid, startedAt: Math.round(performance.timeOrigin) };
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await tryCreate(path, me)) return { path, release: () => releaseLock(path, me) };
    const owner = await readOwner(path);
    if (owner === undefined) continue; // removed between our create and our read: try again
    if (isAlive(owner, me)) throw new FolderLockedError(folder, path, owner.pid);
    await removeIfStill(path, owner);
  }
  throw new Error(`could not take the lock file ${path}: it keeps changing hands`);
}

async function tryCreate(path: string, me: Owner): Promise<boolean> {
  try {
    const file = await open(path, 'wx', 0o600);
    try {
      await file.writeFile(`${me.pid}\n${me.startedAt}\n`);
      await file.sync();
    } finally {
      await file.close();
    }
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

async function readOwner(path: string): Promise<Owner | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const [pid, startedAt] = text.split('\n').map((line) => Number.parseInt(line, 10));
  // An empty or garbled file is what a crash between create and write leaves: stale.
  return { pid: Number.isSafeInteger(pid) && pid > 0 ? pid : 0, startedAt: startedAt ?? 0 };
}

function isAlive(owner: Owner, me: Owner): boolean {
  if (owner.pid === 0) return false;
  if (owner.pid === me.pid) return owner.startedAt === me.startedAt;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes a stale lock, unless it changed since we read it. Two processes taking over the same stale lock
 * at the same instant could still both win in the narrow gap between the read and the unlink; a stale
 * lock is the leftover of a crash, so this is accepted rather than adding a second lock.
 */
async function removeIfStill(path: string, stale: Owner): Promise<void> {
  const now = await readOwner(path);
  if (now === undefined || now.pid !== stale.pid || now.startedAt !== stale.startedAt) return;
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

async function releaseLock(path: string, me: Owner): Promise<void> {
  const owner = await readOwner(path);
  if (owner === undefined || owner.pid !== me.pid || owner.startedAt !== me.startedAt) return;
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}
