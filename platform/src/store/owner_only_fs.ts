import { mkdir } from 'node:fs/promises';
import type { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import type { Logger } from 'pino';
import { tightenTree } from '../private_dir.ts';

/** The permission bits of group and others, taken from every mode the database asks for. */
const groupAndOthers = 0o077;

/** The emscripten options PGlite's file systems hand on, and the module they are applied to. */
type ModuleOptions = Parameters<NodeFS['init']>[1];
type PreRun = NonNullable<ModuleOptions['preRun']>[number];

/** The part of emscripten's NODEFS this file changes: where it creates nodes and sets their modes. */
type NodeFsOps = {
  node_ops: {
    mknod?: (parent: unknown, name: string, mode: number, dev: number) => unknown;
    setattr?: (node: unknown, attr: { mode?: number }) => void;
  };
  stream_ops: { setattr?: (stream: unknown, attr: { mode?: number }) => void };
};

/**
 * PGlite's Node file system with every file and folder it makes owner-only (0600 and 0700 at most), whatever
 * the process umask and whatever mode the database asks for: emscripten asks Node for 0666 and 0777 less its
 * own umask (022) and PGlite's initdb copies its files in at 0666, so the embedded database's files were
 * readable to every user who could reach the folder. The modes are narrowed inside the PGlite module's own
 * NODEFS (where it creates a node and where it changes a mode), so no process umask changes and no other file
 * of the process is affected.
 */
export class OwnerOnlyNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: ModuleOptions): Promise<{ emscriptenOpts: ModuleOptions }> {
    const { emscriptenOpts } = await super.init(pg, opts);
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [ownerOnlyModes, ...(emscriptenOpts.preRun ?? [])] } };
  }
}

/**
 * Narrows the modes of the module's NODEFS before anything is created. A PGlite whose NODEFS no longer has
 * these entry points is refused rather than run with open files: an upgrade meets this in the tests first.
 */
const ownerOnlyModes: PreRun = (mod) => {
  const nodefs = (mod as unknown as { NODEFS?: Partial<NodeFsOps> }).NODEFS;
  const nodeOps = nodefs?.node_ops;
  const streamOps = nodefs?.stream_ops;
  const { mknod, setattr } = nodeOps ?? {};
  const setStreamAttr = streamOps?.setattr;
  if (!nodeOps || !streamOps || !mknod || !setattr || !setStreamAttr) {
    throw new Error("PGlite's Node file system has changed: the embedded store cannot keep its files owner-only");
  }
  const narrow = (attr: { mode?: number }) => (attr.mode === undefined ? attr : { ...attr, mode: attr.mode & ~groupAndOthers });
  nodeOps.mknod = (parent, name, mode, dev) => mknod.call(nodeOps, parent, name, mode & ~groupAndOthers, dev);
  nodeOps.setattr = (node, attr) => setattr.call(nodeOps, node, narrow(attr));
  streamOps.setattr = (stream, attr) => setStreamAttr.call(streamOps, stream, narrow(attr));
};

/**
 * Makes the embedded database's folder owner-only before it is opened: created 0700, or, when a data folder
 * of an older version left it and its contents open to other users, every entry tightened (files 0600,
 * folders 0700), with a warning naming how many.
 */
export async function ownerOnlyDatabaseFolder(path: string, log?: Logger): Promise<void> {
  await mkdir(path, { recursive: true, mode: 0o700 });
  const tightened = await tightenTree(path);
  if (tightened > 0) {
    log?.warn(
      { folder: path, entries: tightened },
      'made the files and folders of the embedded store that other users could reach owner-only',
    );
  }
}
