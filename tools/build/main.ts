/**
 * `npm run build`: one bundle per target in `dist/<target>/` (see `targets`), each with the files it reads
 * at run time and the package.json and lock file its image installs from. Prints what each holds.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { buildAll, bundleFile, repoRoot, targets } from './build.ts';

const dist = join(repoRoot, 'dist');
const started = Date.now();
await buildAll(dist);
for (const target of Object.keys(targets)) {
  const { size } = await stat(join(dist, target, bundleFile));
  const manifest = JSON.parse(await readFile(join(dist, target, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  console.log(`dist/${target}/${bundleFile}  ${(size / 1024).toFixed(0)} KiB  imports ${Object.keys(manifest.dependencies).join(', ')}`);
}
console.log(`built in ${Date.now() - started} ms`);
