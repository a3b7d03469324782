/**
 * The entry of a script worker thread: loads QuickJS once, then runs the jobs the pool sends, one at a
 * time, each in a fresh sandbox. The main thread imports this module only to learn its URL (in a bundle,
 * the URL of the chunk it became), so it does nothing unless it runs as a script worker.
 *
 * Messages: in `{type: 'run' | 'check', job, …}` and `{type: 'reply', job, call, answer}`; out
 * `{type: 'ready'}`, `{type: 'call', job, call, kind, args}` and `{type: 'done', job, result, retire?}`.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { QuickJSWASMModule } from 'quickjs-emscripten-core';
import type { HostFailure } from './limits.ts';
import { memoryGrew } from './quickjs.ts';
import { checkCompiles, loadQuickJS, runInSandbox, type SandboxJob } from './sandbox.ts';

/** Where this module is: the file a script worker thread starts. */
export const sandboxWorkerUrl = import.meta.url;

/** What the pool puts in `workerData` to start a script worker. */
export const workerMarker = 'scada-script-worker';

/** A message from the pool. */
export type ToWorker =
  | ({ type: 'run'; job: number } & SandboxJob)
  | ({ type: 'check'; job: number } & SandboxJob)
  | { type: 'reply'; job: number; call: number; answer: { json: string } | { failure: HostFailure } }
  /** Tests only (`testHooks`): the thread stops answering, as a worker stuck outside the interpreter would. */
  | { type: 'hang'; job: number };

const data = workerData as { kind?: unknown; testHooks?: unknown; memoryBytes?: unknown } | null;
if (!isMainThread && data?.kind === workerMarker && parentPort) {
  const port = parentPort;
  const Q: QuickJSWASMModule = await loadQuickJS(Number(data.memoryBytes) || 16 * 1024 * 1024);
  const waiting = new Map<number, (answer: { json: string } | { failure: HostFailure }) => void>();
  let calls = 0;
  port.on('message', (msg: ToWorker) => {
    if (msg.type === 'reply') {
      waiting.get(msg.call)?.(msg.answer);
      waiting.delete(msg.call);
      return;
    }
    if (msg.type === 'hang') {
      if (data.testHooks !== true) return;
      for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
    }
    if (msg.type === 'check') {
      const problem = checkCompiles(Q, msg.code, msg.limits);
      port.postMessage({ type: 'done', job: msg.job, result: problem });
      return;
    }
    const job = msg.job;
    let broken = false;
    const callHost = (kind: string, args: unknown) => {
      const call = ++calls;
      port.postMessage({ type: 'call', job, call, kind, args });
      return new Promise<{ json: string } | { failure: HostFailure }>((resolve) => waiting.set(call, resolve));
    };
    void runInSandbox(Q, msg, callHost, () => (broken = true)).then((result) => {
      // A module that may be unusable (a runtime not freed cleanly, a memory that ran out under the host's
      // own allocations) is not trusted with another run: `retire` has the pool start a new thread.
      // Answers of calls the run no longer waits for are dropped when they come.
      port.postMessage({ type: 'done', job, result, retire: broken || (result.outcome === 'out_of_memory' && memoryGrew(Q)) });
    });
  });
  port.postMessage({ type: 'ready' });
}
