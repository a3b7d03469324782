/**
 * QuickJS as the sandbox uses it: the module loaded once per worker thread in a bounded WebAssembly
 * memory, a compile check, what a script's error says (name, message, line and column in the code as
 * written) and which outcome it stands for, and how much a running script holds.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import type { CompileProblem, RunOutcome, SandboxLimits, ScriptError } from './limits.ts';
import { scriptFile, scriptPrefix, scriptSuffix } from './prelude.ts';

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
  const Q = await newQuickJSWASMModuleFromVariant(newVariant(variant as unknown as QuickJSSyncVariant, { wasmBinary, wasmMemory }));
  memories.set(Q, wasmMemory);
  return Q;
}

const memories = new WeakMap<QuickJSWASMModule, WebAssembly.Memory>();

/**
 * Whether the module's WebAssembly memory grew past what it started with. A run that truly ran out of
 * memory made it grow (what a script holds past its limit does not fit in the first 16 MiB beside QuickJS
 * itself); an `InternalError("out of memory")` a script merely threw did not, and costs no new thread.
 */
export function memoryGrew(Q: QuickJSWASMModule): boolean {
  const memory = memories.get(Q);
  return memory === undefined || memory.buffer.byteLength > initialPages * pageBytes;
}

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
export function errorOf(ctx: QuickJSContext, handle: QuickJSHandle, code: string): ScriptError {
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
export function outcomeOf(error: ScriptError): RunOutcome {
  if (error.name !== 'InternalError') return 'error';
  if (error.message === 'interrupted') return 'timeout';
  if (error.message === 'out of memory' || error.message === 'string too long') return 'out_of_memory';
  if (error.message === 'stack overflow') return 'stack_overflow';
  return 'error';
}

/** How often (at least) the memory a running script holds is measured. */
export const memoryCheckMs = 20;

/** The bytes a runtime's objects, strings and arrays hold, as QuickJS measures them. */
export function memoryUsed(rt: QuickJSRuntime): number {
  const m = /memory used\s+\d+\s+(\d+)/.exec(rt.dumpMemoryUsage());
  return m ? Number(m[1]) : 0;
}
