import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { ServiceName } from '@scada/contracts';
import { migrate, PGliteStore } from '@scada/platform/testing';
import { storeTemplateFile } from '@scada/platform';
import { allParts } from '../../launch.ts';
import type { Target } from './build.ts';

/**
 * The services whose schemas a target's template holds: the targets that run on an edge box, on the
 * embedded store: every service in the all-in-one, its own in the protocol service (an edge site's). The
 * other services run on PostgreSQL; on the embedded store they create theirs at first start, as before.
 */
export function servicesOf(target: Target): ServiceName[] {
  if (target === 'edge') return Object.keys(allParts.services) as ServiceName[];
  return target === 'protocol' ? ['protocol'] : [];
}

/**
 * Writes `store_template.tar.gz` into the folder of a target that runs on an edge box: the embedded store's data folder with every
 * migration of the target's services applied, which a first start on a new `DATA_DIR` unpacks instead of
 * running initdb and the migrations (`PGliteStore.open`'s `templateFile`). `base` is a dump of a store
 * fresh from initdb, made once for every target. Nothing in it depends on the install: accounts, keys and
 * certificates are made at first start, after it is unpacked.
 */
export async function writeStoreTemplate(target: Target, out: string, base: Blob): Promise<void> {
  const services = servicesOf(target);
  if (services.length === 0) return;
  const store = await PGliteStore.memory({ template: base });
  try {
    for (const name of services) {
      const def = allParts.services[name]!;
      await migrate(store, def.schema, await def.migrations());
    }
    const dump = await store.dump();
    await writeFile(join(out, storeTemplateFile), gzipSync(Buffer.from(await dump.arrayBuffer())));
  } finally {
    await store.close();
  }
}

/** A dump of a store fresh from initdb, the start of every target's template. */
export async function freshStoreDump(): Promise<Blob> {
  const store = await PGliteStore.memory();
  try {
    return await store.dump();
  } finally {
    await store.close();
  }
}
