/**
 * One run of a script in QuickJS compiled to WebAssembly, in a runtime and context made for it alone and
 * thrown away after it: nothing of one run (a changed prototype, a global, a pending promise) is there for
 * the next. The runtime has a memory limit, a stack limit and an interrupt handler that stops the
 * interpreter at the deadline; a wall-clock timer ends a run that waits for the host past it. The context
 * has the language's built-ins and `ins` (`prelude.ts`), nothing else: no module loader, no timers, no
 * access to the worker it runs in. Runs on a worker thread (`sandbox_worker.ts`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import {
  type CompileProblem,
  type HostFailure,
  maxResultBytes,
  type RunOutcome,
  type RunResult,
  type SandboxLimits,
  type ScriptError,
} from './limits.ts';
import { checkHostCall } from './host_calls.ts';
import { preludeSource, scriptFile, scriptPrefix, scriptSuffix } from './prelude.ts';

/**
 * The WebAssembly file, read beside the sources as the build carries it: the build copies the file this URL
 * names next to the bundle (tools/build/runtime_files.ts), and the image holds it there.
 */
const wasmBeside = new URL('../../../node_modules/@jitl/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm', import.meta.url);

/** The WebAssembly memory QuickJS starts with (its build asks for 16 MiB). */
const initialPages = 256;
const pageBytes = 65536;

/**
 * Loads QuickJS once per thread, in a WebAssembly memory that cannot grow past 16 MiB plus
 * `memoryBytes`: QuickJS measures what a script holds only every few thousand steps (`#interrupt`), and a
 * step may allocate much (a megabyte buffer a step), so this is the bound a bomb meets between two
 * measurements. The thread then fails the allocation (`out_of_memory`) instead of the process growing.
 */
export async function loadQuickJS(memoryBytes: number): Promise<QuickJSWASMModule> {
  const bytes = existsSync(wasmBeside)
    ? readFileSync(wasmBeside)
    : readFileSync(createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm'));
  const wasmBinary = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  // The package's types describe its CommonJS build; the default export is the variant either way.
  const wasmMemory = new WebAssembly.Memory({ initial: initialPages, maximum: initialPages + Math.ceil(memoryBytes / pageBytes) });
  return newQuickJSWASMModuleFromVariant(newVariant(variant as unknown as QuickJSSyncVariant, { wasmBinary, wasmMemory }));
}

/** One job for the sandbox. */
export type SandboxJob = { code: string; limits: SandboxLimits; state: string | null };

/** How the sandbox asks the host to serve a call to the plant: the answer as JSON text, or a failure. */
export type HostCaller = (kind: string, args: unknown) => Promise<{ json: string } | { failure: HostFailure }>;

/** The longest argument text a host call takes. */
const maxArgumentBytes = 1024 * 1024;
const stackLines = /script\.js:(\d+):(\d+)/;

/** Compiles the code without running it: null when it compiles, else where and why it does not. */
export function checkCompiles(Q: QuickJSWASMModule, code: string, limits: SandboxLimits): CompileProblem {
  const rt = Q.newRuntime();
  try {
    const deadline = Date.now() + limits.deadlineMs;
    rt.setMemoryLimit(limits.memoryBytes);
    rt.setMaxStackSize(limits.stackBytes);
    rt.setInterruptHandler(() => Date.now() > deadline);
    const ctx = rt.newContext();
    try {
      const compiled = ctx.evalCode(scriptPrefix + code + scriptSuffix, scriptFile, { type: 'global', compileOnly: true });
      if (!compiled.error) {
        compiled.value.dispose();
        return null;
      }
      const problem = errorOf(ctx, compiled.error, code);
      compiled.error.dispose();
      return problem;
    } finally {
      ctx.dispose();
    }
  } finally {
    rt.dispose();
  }
}

/** Where an error names a place in the script's code: line and column in the code as written. */
function placeOf(stack: string | null, code: string): { line: number | null; column: number | null } {
  const m = stack ? stackLines.exec(stack) : null;
  if (!m) return { line: null, column: null };
  const lines = code.split('\n').length;
  let line = Number(m[1]);
  let column = Number(m[2]);
  if (line === 1) column = Math.max(1, column - scriptPrefix.length);
  if (line > lines) [line, column] = [lines, (code.split('\n')[lines - 1]?.length ?? 0) + 1];
  return { line, column };
}

/**
 * Reads an error thrown in the sandbox: name, message and where. Reading a property may run the script's
 * code (a getter on a thrown object); that runs in the sandbox, under its deadline, and a failure to read
 * leaves the field generic.
 */
function errorOf(ctx: QuickJSContext, handle: QuickJSHandle, code: string): ScriptError {
  const text = (key: string): string | null => {
    try {
      const prop = ctx.getProp(handle, key);
      try {
        return ctx.typeof(prop) === 'string' ? ctx.getString(prop) : null;
      } finally {
        prop.dispose();
      }
    } catch {
      return null;
    }
  };
  const kind = ctx.typeof(handle);
  if (kind !== 'object' && kind !== 'function') {
    let shown = kind;
    try {
      const value = ctx.dump(handle);
      shown = typeof value === 'string' ? value : (JSON.stringify(value) ?? kind);
    } catch {
      // keep the type
    }
    return { name: 'Error', message: `the script threw ${shown.slice(0, 1024)}`, line: null, column: null };
  }
  const name = text('name') ?? 'Error';
  const message = (text('message') ?? 'the script threw an object that is not an Error').slice(0, 4096);
  return { name: name.slice(0, 100), message, ...placeOf(text('stack'), code) };
}

/** The outcome an error stands for: QuickJS's own limit errors, or the script's error. */
function outcomeOf(error: ScriptError): RunOutcome {
  if (error.name !== 'InternalError') return 'error';
  if (error.message === 'interrupted') return 'timeout';
  if (error.message === 'out of memory' || error.message === 'string too long') return 'out_of_memory';
  if (error.message === 'stack overflow') return 'stack_overflow';
  return 'error';
}

/** How often (at least) the memory a running script holds is measured. */
const memoryCheckMs = 20;

/** The bytes a runtime's objects, strings and arrays hold, as QuickJS measures them. */
function memoryUsed(rt: QuickJSRuntime): number {
  const m = /memory used\s+\d+\s+(\d+)/.exec(rt.dumpMemoryUsage());
  return m ? Number(m[1]) : 0;
}

/** UTF-8 length of a string. */
const bytesOf = (s: string) => Buffer.byteLength(s, 'utf8');

/** Cuts a string to at most `max` UTF-8 bytes, never inside a character. */
function cut(s: string, max: number): string {
  if (bytesOf(s) <= max) return s;
  let out = Buffer.from(s, 'utf8').subarray(0, max).toString('utf8');
  while (bytesOf(out) > max || out.endsWith('\uFFFD')) out = out.slice(0, -1);
  return out;
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
    this.#finish(this.#truncated ? 'log_truncated' : 'ok', text === null ? null : (JSON.parse(text) as unknown));
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
    this.#finish(outcomeOf(error), null, { ...error, message: prefix + error.message });
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
