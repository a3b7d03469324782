/** Runs every benchmark in turn (`npm run bench`); each prints its own table. */
import { readdir } from 'node:fs/promises';

const here = new URL('.', import.meta.url);
const only = process.argv[2];
for (const file of (await readdir(here)).filter((f) => f.endsWith('.bench.ts')).sort()) {
  if (only && !file.includes(only)) continue;
  console.log(`\n## ${file}\n`);
  await import(new URL(file, here).href);
}
