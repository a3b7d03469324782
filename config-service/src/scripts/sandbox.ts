/**
 * One run of a script in QuickJS compiled to WebAssembly, in a runtime and context made for it alone and
 * thrown away after it: nothing of one run (a changed prototype, a global, a pending promise) is there for
 * the next. The runtime has a memory limit, a stack limit and an interrupt handler that stops the
 * interpreter at the deadline; a wall-clock timer ends a run that waits for the host past it. The context
 * has the language's built-ins and `ins` (`prelude.ts`), nothing else: no module loader, no timers, no
 * access to the worker it runs in. Runs on a worker thread (`sandbox_worker.ts`).
 */
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten-core';
import { type HostFailure, maxResultBytes, type RunOutcome, type RunResult, type SandboxLimits, type ScriptError } from './limits.ts';
import { checkHostCall } from './host_calls.ts';
import { preludeSource, scriptFile, scriptPrefix, scriptSuffix } from './prelude.ts';
import { errorOf, memoryCheckMs, memoryUsed, outcomeOf } from './quickjs.ts';

export { checkCompiles, loadQuickJS } from './quickjs.ts';

/** One job for the sandbox. */
export type SandboxJob = { code: string; limits: SandboxLimits; state: string | null };

/** How the sandbox asks the host to serve a call to the plant: the answer as JSON text, or a failure. */
export type HostCaller = (kind: string, args: unknown) => Promise<{ json: string } | { failure: HostFailure }>;

/** The longest argument text a host call takes. */
const maxArgumentBytes = 1024 * 1024;
/** UTF-8 length of a string. */
const bytesOf = (s: string) => Buffer.byteLength(s, 'utf8');

/** Cuts a string to at most `max` UTF-8 bytes, never inside a character. */
function cut(s: string, max: number): string {
  if (bytesOf(s) <= max) return s;
  const bytes = Buffer.from(s, 'utf8');
  let end = max;
  // Back over the continuation bytes (10xxxxxx) of a character the cut would split, to its first byte.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** The deepest nesting of a result, as the contract bounds a request's JSON. */
export const maxResultDepth = 64;

/** How deep the arrays and objects of a JSON text nest (brackets inside strings not counted). */
function depthOf(json: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * Runs one script and answers how it ended; never throws for anything the script does. `onBroken` hears of a
 * run whose runtime could not be freed cleanly: the WebAssembly module may be left unusable, and the
 * thread should be replaced.
 */
export function runInSandbox(
  Q: QuickJSWASMModule,
  job: SandboxJob,
  callHost: HostCaller,
  onBroken: () => void = () => {},
): Promise<RunResult> {
  return new Promise((resolve) => new SandboxRun(Q, job, callHost, resolve, onBroken).start());
}

class SandboxRun {
  readonly #job: SandboxJob;
  readonly #callHost: HostCaller;
  readonly #resolve: (result: RunResult) => void;
  readonly #onBroken: () => void;
  readonly #rt: QuickJSRuntime;
  readonly #ctx: QuickJSContext;
  readonly #started = performance.now();
  readonly #deadline: number;
  readonly #logs: string[] = [];
  readonly #pending = new Set<QuickJSDeferredPromise>();
  readonly #handles: QuickJSHandle[] = [];
  #truncated = false;
  #compileFailed = false;
  #state: string | null;
  #stateChanged = false;
  #helpers: { json: QuickJSHandle; fail: QuickJSHandle; parse: QuickJSHandle } | null = null;
  #promise: QuickJSHandle | null = null;
  #timer: NodeJS.Timeout | null = null;
  #done = false;
  #nextMemoryCheck = 0;
  #memoryExceeded = false;

  constructor(Q: QuickJSWASMModule, job: SandboxJob, callHost: HostCaller, resolve: (result: RunResult) => void, onBroken: () => void) {
    this.#job = job;
    this.#onBroken = onBroken;
    this.#callHost = callHost;
    this.#resolve = resolve;
    this.#state = job.state;
    this.#deadline = Date.now() + job.limits.deadlineMs;
    this.#rt = Q.newRuntime();
    this.#rt.setMemoryLimit(job.limits.memoryBytes);
    this.#rt.setMaxStackSize(job.limits.stackBytes);
    this.#rt.setInterruptHandler(() => this.#interrupt());
    this.#ctx = this.#rt.newContext();
  }

  /**
   * Asked by the interpreter every few thousand steps: past the deadline, once the run is over, or past the
   * memory limit it stops. This build of QuickJS counts only the size of each allocation against the
   * limit, not what is held (it cannot read a block's usable size), so what the script holds is measured
   * here, every {@link memoryCheckMs} of running and never more than a tenth of the time.
   */
  #interrupt(): boolean {
    if (this.#done) return true;
    const now = Date.now();
    if (now > this.#deadline) return true;
    if (now < this.#nextMemoryCheck) return false;
    const started = performance.now();
    const used = memoryUsed(this.#rt);
    this.#nextMemoryCheck = now + Math.max(memoryCheckMs, (performance.now() - started) * 10);
    if (used <= this.#job.limits.memoryBytes) return false;
    this.#memoryExceeded = true;
    return true;
  }

  start(): void {
    this.#timer = setTimeout(() => this.#finish('timeout', null, this.#timeoutError()), Math.max(0, this.#deadline - Date.now()));
    try {
      if (!this.#install()) return;
      const compiled = this.#ctx.evalCode(scriptPrefix + this.#job.code + scriptSuffix, scriptFile, { type: 'global' });
      if (compiled.error) {
        this.#compileFailed = true;
        return this.#failWith(compiled.error);
      }
      const called = this.#ctx.callFunction(compiled.value, this.#ctx.undefined);
      compiled.value.dispose();
      if (called.error) return this.#failWith(called.error);
      this.#promise = called.value;
      this.#drive();
    } catch (err) {
      this.#crash(err);
    }
  }

  /** Evaluates the prelude with the host functions; false when the run already ended. */
  #install(): boolean {
    const ctx = this.#ctx;
    const host = this.#keep(ctx.newObject());
    const fn = (name: string, impl: (...args: QuickJSHandle[]) => QuickJSHandle | { error: QuickJSHandle } | undefined) => {
      const f = ctx.newFunction(name, impl);
      ctx.setProp(host, name, f);
      f.dispose();
    };
    fn('call', (kind, args) => this.#hostCall(kind, args));
    fn('log', (line) => this.#log(line));
    fn('now', () => ctx.newNumber(Date.now()));
    fn('stateGet', () => (this.#state === null ? ctx.null : ctx.newString(this.#state)));
    fn('stateSet', (json) => this.#stateSet(json));
    const prelude = ctx.evalCode(preludeSource, 'ins.js', { type: 'global' });
    if (prelude.error) return (this.#failWith(prelude.error), false);
    const made = ctx.callFunction(prelude.value, ctx.undefined, host);
    prelude.value.dispose();
    if (made.error) return (this.#failWith(made.error), false);
    const helpers = this.#keep(made.value);
    const json = this.#keep(ctx.getProp(helpers, 'json'));
    const fail = this.#keep(ctx.getProp(helpers, 'fail'));
    const parse = this.#keep(ctx.getProp(this.#keep(ctx.getProp(ctx.global, 'JSON')), 'parse'));
    this.#helpers = { json, fail, parse };
    return true;
  }

  #keep(handle: QuickJSHandle): QuickJSHandle {
    this.#handles.push(handle);
    return handle;
  }

  #typeError(message: string) {
    return { error: this.#ctx.newError({ name: 'TypeError', message }) };
  }

  /** `ins.read`, `ins.values`, `ins.write`, `ins.operate`: a promise settled by the host's answer. */
  #hostCall(kindHandle: QuickJSHandle, argsHandle: QuickJSHandle) {
    const ctx = this.#ctx;
    if (ctx.typeof(kindHandle) !== 'string' || ctx.typeof(argsHandle) !== 'string') return this.#typeError('host calls take text');
    const kind = ctx.getString(kindHandle);
    const text = ctx.getString(argsHandle);
    if (bytesOf(text) > maxArgumentBytes) return this.#typeError(`the arguments are longer than ${maxArgumentBytes} bytes`);
    const checked = checkHostCall(kind, JSON.parse(text) as unknown);
    if (typeof checked === 'string') return this.#typeError(checked);
    const deferred = ctx.newPromise();
    this.#pending.add(deferred);
    void this.#callHost(kind, checked).then(
      (answer) => this.#settle(deferred, answer),
      (err: unknown) => this.#settle(deferred, { failure: { message: (err as Error)?.message ?? 'the host call failed' } }),
    );
    return deferred.handle;
  }

  #settle(deferred: QuickJSDeferredPromise, answer: { json: string } | { failure: HostFailure }): void {
    if (this.#done || !this.#pending.delete(deferred)) return;
    try {
      const ctx = this.#ctx;
      const helpers = this.#helpers!;
      if ('json' in answer) {
        const input = ctx.newString(answer.json);
        const parsed = ctx.callFunction(helpers.parse, ctx.undefined, input);
        input.dispose();
        if (parsed.error) deferred.reject(parsed.error), parsed.error.dispose();
        else deferred.resolve(parsed.value), parsed.value.dispose();
      } else {
        const f = answer.failure;
        const args = [
          ctx.newString(f.message),
          f.code === undefined ? ctx.undefined : ctx.newString(f.code),
          f.status === undefined ? ctx.undefined : ctx.newNumber(f.status),
          f.deviceError === undefined ? ctx.undefined : ctx.newString(JSON.stringify(f.deviceError)),
        ];
        const made = ctx.callFunction(helpers.fail, ctx.undefined, ...args);
        for (const a of args) if (a !== ctx.undefined) a.dispose();
        const error = made.error ?? made.value;
        deferred.reject(error);
        error.dispose();
      }
      deferred.dispose();
      this.#drive();
    } catch (err) {
      this.#crash(err);
    }
  }

  /** `ins.log`: keeps the line within the limits, counting what is dropped or cut. */
  #log(lineHandle: QuickJSHandle) {
    if (this.#ctx.typeof(lineHandle) !== 'string') return this.#typeError('log lines are text');
    if (this.#logs.length >= this.#job.limits.logLines) {
      this.#truncated = true;
      return undefined;
    }
    const line = this.#ctx.getString(lineHandle);
    const kept = cut(line, this.#job.limits.logLineBytes);
    if (kept.length !== line.length) this.#truncated = true;
    this.#logs.push(kept);
    return undefined;
  }

  /** `ins.state.set`: the new state, at most `stateBytes`; a larger one is refused and the state stays. */
  #stateSet(jsonHandle: QuickJSHandle) {
    if (this.#ctx.typeof(jsonHandle) !== 'string') return this.#typeError('the state is JSON text');
    const json = this.#ctx.getString(jsonHandle);
    const size = bytesOf(json);
    if (size > this.#job.limits.stateBytes)
      return {
        error: this.#ctx.newError({
          name: 'RangeError',
          message: `the state is ${size} bytes of JSON; at most ${this.#job.limits.stateBytes} are kept (the state is unchanged)`,
        }),
      };
    this.#state = json === 'null' ? null : json;
    this.#stateChanged = true;
    return undefined;
  }

  /** Runs what is runnable, then ends the run if its promise settled or nothing can settle it any more. */
  #drive(): void {
    if (this.#done) return;
    const ctx = this.#ctx;
    const jobs = this.#rt.executePendingJobs(-1);
    if (jobs.error) return this.#failWith(jobs.error);
    // A job stopped by the interrupt rejects its own promise instead of failing the jobs: the limit says how the run ended.
    if (this.#memoryExceeded || Date.now() > this.#deadline) return this.#failWith(ctx.undefined);
    const state = ctx.getPromiseState(this.#promise!);
    if (state.type === 'fulfilled') return this.#fulfilled(state.value);
    if (state.type === 'rejected') return this.#failWith(state.error);
    if (this.#pending.size === 0 && !this.#rt.hasPendingJob()) {
      this.#finish('error', null, {
        name: 'Error',
        message: 'the script waits for a promise that nothing can settle any more',
        line: null,
        column: null,
      });
    }
  }

  /** Ends the run with the script's result (and disposes its handle first: the runtime is freed with nothing alive). */
  #fulfilled(value: QuickJSHandle): void {
    const ctx = this.#ctx;
    const json = ctx.callFunction(this.#helpers!.json, ctx.undefined, value);
    value.dispose();
    if (json.error) return this.#failWith(json.error, 'the result is not a JSON value: ');
    const text = ctx.typeof(json.value) === 'string' ? ctx.getString(json.value) : null;
    json.value.dispose();
    if (text !== null && bytesOf(text) > maxResultBytes) {
      return this.#finish('error', null, {
        name: 'RangeError',
        message: `the result is ${bytesOf(text)} bytes of JSON; at most ${maxResultBytes} are answered`,
        line: null,
        column: null,
      });
    }
    // Nested deeper, a result would pass the host's own recursion (the answer's copy between threads, its
    // JSON on the bus and to the client) and fail there instead of here, with a reason.
    if (text !== null && depthOf(text) > maxResultDepth) {
      return this.#finish('error', null, {
        name: 'RangeError',
        message: `the result nests arrays and objects ${depthOf(text)} levels deep; at most ${maxResultDepth} are answered`,
        line: null,
        column: null,
      });
    }
    this.#finish('ok', text === null ? null : (JSON.parse(text) as unknown));
  }

  /** Ends the run with the error the sandbox raised (and disposes its handle). */
  #failWith(handle: QuickJSHandle, prefix = ''): void {
    // Reading the error may run the script's getters; past the deadline the run is a timeout, whatever they did.
    if (this.#memoryExceeded) {
      if (handle.alive && handle !== this.#ctx.undefined) handle.dispose();
      const message = `the script holds more than the ${this.#job.limits.memoryBytes} bytes it may`;
      return this.#finish('out_of_memory', null, { name: 'InternalError', message, line: null, column: null });
    }
    const error = Date.now() > this.#deadline ? null : errorOf(this.#ctx, handle, this.#job.code);
    if (handle.alive && handle !== this.#ctx.undefined) handle.dispose();
    if (error === null || Date.now() > this.#deadline) return this.#finish('timeout', null, this.#timeoutError());
    // An error's name and message are words a script can write itself (`throw new InternalError("interrupted")`):
    // a timeout is the deadline's alone.
    const outcome = outcomeOf(error);
    this.#finish(outcome === 'timeout' ? 'error' : outcome, null, { ...error, message: prefix + error.message });
  }

  #timeoutError(): ScriptError {
    return { name: 'InternalError', message: `the run passed its deadline of ${this.#job.limits.deadlineMs} ms`, line: null, column: null };
  }

  /** Something in the host side of the sandbox failed: the run ends as an error, the thread goes on. */
  #crash(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const memory = /memory/i.test(message);
    this.#finish(memory ? 'out_of_memory' : 'error', null, {
      name: 'InternalError',
      message: `the sandbox failed: ${message}`,
      line: null,
      column: null,
    });
  }

  #finish(outcome: RunOutcome, result: unknown, error?: ScriptError): void {
    if (this.#done) return;
    this.#done = true;
    if (this.#timer) clearTimeout(this.#timer);
    const run: RunResult = {
      outcome,
      result,
      logs: this.#logs,
      ...(this.#truncated ? { logsTruncated: true as const } : {}),
      durationMs: Math.round((performance.now() - this.#started) * 100) / 100,
      ...(error ? { error } : {}),
      ...(this.#stateChanged ? { state: this.#state } : {}),
      ...(this.#compileFailed ? { compileFailed: true as const } : {}),
    };
    this.#dispose();
    this.#resolve(run);
  }

  #dispose(): void {
    const steps = [
      ...[...this.#pending].map((d) => () => d.dispose()),
      ...this.#handles.map((h) => () => h.alive && h.dispose()),
      () => this.#promise?.alive && this.#promise.dispose(),
      () => this.#ctx.dispose(),
      () => this.#rt.dispose(),
    ];
    this.#pending.clear();
    let broken = false;
    for (const step of steps) {
      try {
        step();
      } catch {
        // What follows is freed all the same; the module may be unusable now (an aborted assertion).
        broken = true;
      }
    }
    if (broken) this.#onBroken();
  }
}
