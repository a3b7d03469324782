import type { Plugin } from 'esbuild';

/**
 * Modules the bundles load with `require` (made with `createRequire`) instead of an ES import, as their
 * default export. From Node 22 on, `node:http` and `node:https` export `WebSocket` and its events as lazy
 * getters that load Node's whole fetch implementation, and an ES import of a built-in module reads every
 * export to build its namespace: some 16 MiB more in every process, for classes the platform never uses.
 * `require` reads only what the code asks for; this holds for the packages bundled in too (the router's
 * ES build imports `http`). A named import of one of these fails the build, on purpose.
 */
const loadedByRequire = new Map<string, string>([
  ['http', 'node:http'],
  ['node:http', 'node:http'],
  ['https', 'node:https'],
  ['node:https', 'node:https'],
]);

/** The esbuild plugin that serves each module above as a `require` of it. */
export function byRequire(): Plugin {
  const filter = new RegExp(`^(${[...loadedByRequire.keys()].map((k) => k.replace(/[/.]/g, '\\$&')).join('|')})$`);
  return {
    name: 'by-require',
    setup(b) {
      b.onResolve({ filter }, (args) => ({ path: loadedByRequire.get(args.path)!, namespace: 'by-require' }));
      b.onLoad({ filter: /.*/, namespace: 'by-require' }, (args) => ({
        // Written as a call of `require`, so that the image's package list finds the package.
        contents: `import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\nexport default require(${JSON.stringify(args.path)});\n`,
        loader: 'js',
        resolveDir: process.cwd(),
      }));
    },
  };
}
