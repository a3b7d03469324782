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
// A plain module on purpose: it must load before anything can read TypeScript.
if (!process.features.typescript) await import('tsx');
