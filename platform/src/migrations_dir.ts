import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Migration } from './store/store.ts';

/**
 * Reads a service's migrations from its `migrations/` folder: every `NNNN_name.sql` file, in name order,
 * the file name without `.sql` as the migration id. A missing folder means no migrations.
 */
export async function loadMigrations(folder: URL): Promise<Migration[]> {
  const path = fileURLToPath(folder);
  let names: string[];
  try {
    names = await readdir(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const files = names.filter((n) => /^\d{4}_[a-z0-9_]+\.sql$/.test(n)).sort();
  return Promise.all(files.map(async (n) => ({ id: n.slice(0, -4), sql: await readFile(`${path}/${n}`, 'utf8') })));
}
