/**
 * The file a worker thread of the platform starts: the worker module itself (a chunk of the bundle; the
 * TypeScript source under Deno and under a Node that strips types itself, 22.18 and later), or, from the
 * TypeScript sources under an older Node, the starter beside it (`starter`, a plain `.mjs` file that
 * registers tsx and then imports the worker): a worker thread does not inherit the main thread's
 * `--import tsx`.
 */
export function workerEntry(moduleUrl: string, starter: string): URL {
  const stripsTypes = 'Deno' in globalThis || Boolean((process.features as { typescript?: unknown }).typescript);
  const fromSource = moduleUrl.endsWith('.ts') && !stripsTypes;
  return fromSource ? new URL(starter, moduleUrl) : new URL(moduleUrl);
}
