// What tap loads first in every test process (package.json: "tap"."node-arg"), and what a test that starts
// a TypeScript child can give it: tsx's loader, but only where Node cannot run TypeScript itself.
//
// A Node that strips types on its own (22.18 and later, 24 in the images and in CI: `process.features.typescript`)
// loads the suite's `.ts` files as they are; the project's TypeScript is erasable and imports with `.ts` paths,
// which is all it needs. tsx's hooks on top of it are pure cost: on Node 20 they run on a thread of their own
// and pay a round trip for each of the 600-odd modules a platform loads, about 0.8 CPU-s of every test process
// (1.9 CPU-s to import the platform through tsx, 1.0-1.2 with Node 24's own stripping). An older Node gets tsx,
// as `npm start` gives it, so that `npm test` and `npx tap FILE` keep working there.
//
// Two more costs of every test process, on a Node that strips types (docs/testing.md, fifth pass):
// - Node's compile cache (22.1 and later): the stripped TypeScript and V8's compiled code of every module are
//   kept on disk (`node_modules/.cache/scada-node-compile-cache`: the checkout's own, not a shared temporary
//   folder another user could fill first; keyed by each file's content, so an edited file is compiled again) and read back by the next process instead of stripping and compiling the same 600 modules again:
//   importing the platform 1.6-1.7 CPU-s without it, 0.7-0.9 with it warm. Handed on to the processes a test
//   starts (a platform, a simulator) through `NODE_COMPILE_CACHE`, unless the test's environment names one.
// - Source maps: tap starts every test with `--enable-source-maps`, and its module recorder
//   (`@tapjs/processinfo`) then parses the map of every dependency file that names one, on each module load
//   (0.2-0.3 CPU-s a process). Stripped TypeScript keeps every line and column where they were, so the suite's
//   own stack traces need no map; they are turned off in the test process (not in the processes it starts).
//
// A plain module on purpose: it must load before anything can read TypeScript.
import module from 'node:module';
import { fileURLToPath } from 'node:url';

if (process.features.typescript) {
  process.setSourceMapsEnabled(false);
  if (typeof module.enableCompileCache === 'function') {
    process.env.NODE_COMPILE_CACHE ||= fileURLToPath(new URL('../../node_modules/.cache/scada-node-compile-cache', import.meta.url));
    module.enableCompileCache(process.env.NODE_COMPILE_CACHE);
  }
} else {
  await import('tsx');
}
