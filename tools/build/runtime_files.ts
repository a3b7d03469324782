import { readFile } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';
import type { Plugin } from 'esbuild';

/** `new URL('<relative path>', import.meta.url)`: a file or folder a module reads beside itself at run time. */
const besideModule = /new URL\(\s*(['"])(\.\.?\/[^'"]*)\1\s*,\s*import\.meta\.url\s*\)/g;

/**
 * An esbuild plugin for files the sources read at run time (a service's `migrations/` folder): each
 * `new URL('../migrations/', import.meta.url)` is rewritten to the same path under the bundle's folder
 * (`./auth-service/migrations/`), so the files travel beside the bundle at their repository paths and
 * services sharing a bundle keep theirs apart. `found` collects repository path → absolute source path.
 */
export function runtimeFiles(root: string, found: Map<string, string>): Plugin {
  return {
    name: 'runtime-files',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        const text = await readFile(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        const contents = text.replace(besideModule, (_all, quote: string, path: string) => {
          const source = resolve(dirname(args.path), path);
          const inRepo = relative(root, source).split(sep).join('/');
          if (inRepo.startsWith('..')) throw new Error(`${args.path} reads ${path}, outside the repository`);
          found.set(inRepo, source);
          return `new URL(${quote}./${inRepo}${path.endsWith('/') ? '/' : ''}${quote}, import.meta.url)`;
        });
        return { contents, loader: 'ts' };
      });
    },
  };
}
