/**
 * The script sandbox through its worker pool, without a platform: how runs end at each limit, the escape
 * attempts a hostile script makes (each expectation one a weaker sandbox would fail: `node:vm` reaches
 * `process` through the first), a worker that does not come back, and a property: nothing one run does to
 * its global object or the built-ins is there in the next.
 */
import fc from 'fast-check';
import { pino } from 'pino';
import t from 'tap';
import type { HostApi, HostCall, SandboxLimits } from '../src/scripts/limits.ts';
import { ScriptPool } from '../src/scripts/pool.ts';

const limits: SandboxLimits = {
  memoryBytes: 16 * 1024 * 1024,
  stackBytes: 256 * 1024,
  deadlineMs: 400,
  logLines: 100,
  logLineBytes: 8192,
  stateBytes: 64 * 1024,
};
const pool = new ScriptPool({ size: 2, log: pino({ level: 'silent' }), testHooks: true, memoryBytes: limits.memoryBytes });
t.teardown(() => pool.stop());

const calls: HostCall[] = [];
const host: HostApi = async (call) => {
  calls.push(call);
  if (call.kind === 'read') return { value: 21, quality: null, timestamp: null };
  if (call.kind === 'values') return [];
  if (call.kind === 'write') return null;
  throw Object.assign(new Error('refused'), {
    code: 'device_refused',
    status: 502,
    detail: 'The device refused: Blocked-by-interlocking',
    extensions: { deviceError: { service: 'operate', error: 'object-access-denied', addCause: 'Blocked-by-interlocking' } },
  });
};
const run = (code: string, state: string | null = null, deadlineMs = limits.deadlineMs) =>
  pool.run({ code, limits: { ...limits, deadlineMs }, state }, host);

t.test('a run answers its result, its logs and how long it took', async (t) => {
  const r = await run('ins.log("a", 1, {b: 2}); const v = await ins.read("c", "LD/LN.DO.da[MX]"); return v.value * 2');
  t.match(r, { outcome: 'ok', result: 42, logs: ['a 1 {"b":2}'] });
  t.ok(r.durationMs >= 0 && r.durationMs < 400);
});

t.test('an error names its line and column in the code as written', async (t) => {
  const thrown = await run('const a = 1;\n\n  a.b.c = 2;');
  t.match(thrown, { outcome: 'error', error: { name: 'TypeError', line: 3 } });
  t.ok(thrown.error!.column! >= 3 && thrown.error!.column! <= 7, `at the expression (column ${thrown.error!.column})`);
  t.match(await run('let x = ;'), { outcome: 'error', compileFailed: true, error: { name: 'SyntaxError', line: 1, column: 9 } });
  t.match(await pool.check('ok();\nreturn (', limits), { name: 'SyntaxError', line: 2 });
  t.equal(await pool.check('return 1', limits), null, 'code that compiles');
  t.match(await run('import fs from "fs";'), { outcome: 'error', compileFailed: true }, 'a static import is no statement of a script');
});

t.test('limits end a run with their outcome', async (t) => {
  const loop = await run('for (;;) {}');
  t.equal(loop.outcome, 'timeout', 'an endless loop');
  t.ok(loop.durationMs < limits.deadlineMs + 200, `stopped at the deadline (${loop.durationMs} ms)`);
  t.equal((await run('try { for (;;) {} } catch (e) { return "caught" }')).outcome, 'timeout', 'the interrupt cannot be caught');
  // Bombs get a longer deadline: near its memory limit the interpreter collects garbage often, and this
  // machine may be busy; the outcome, not the speed, is what is checked here.
  const bomb = (code: string) => run(code, null, 5000);
  t.equal((await bomb('let s = "x"; for (;;) s += s;')).outcome, 'out_of_memory', 'a string-doubling bomb');
  t.equal((await bomb('let s = "x"; for (;;) { s += s; s.charCodeAt(s.length - 1); }')).outcome, 'out_of_memory', 'flattened');
  t.equal((await bomb('const a = []; for (;;) a.push("x".repeat(1 << 20) + a.length);')).outcome, 'out_of_memory', 'an allocation bomb');
  t.equal((await bomb('const a = []; for (;;) a.push(new ArrayBuffer(1 << 20));')).outcome, 'out_of_memory', 'buffers');
  t.equal((await run('function f() { return f() + 1 } return f()')).outcome, 'stack_overflow', 'unbounded recursion');
  t.equal((await run('const f = () => [f()]; try { f() } catch (e) { throw e }')).outcome, 'stack_overflow', 'rethrown');
  // Nesting 100,000 arrays takes a while on a busy machine; its limit is the stack, not the clock.
  t.match(
    await run('let a = []; for (let i = 0; i < 100000; i++) a = [a]; return JSON.stringify(a).length', null, 30000),
    { outcome: /stack_overflow|out_of_memory/ },
    'recursion inside a built-in',
  );
  const flood = await run('for (let i = 0; i < 1000; i++) ins.log("line " + i); return "done"');
  t.match(flood, { outcome: 'ok', logsTruncated: true, result: 'done' }, 'a log flood: the run goes on, its lines stop');
  t.equal(flood.logs.length, 100);
  const long = await run('ins.log("é".repeat(10000))');
  t.match(long, { outcome: 'ok', logsTruncated: true });
  t.ok(Buffer.byteLength(long.logs[0]!) <= 8192 && long.logs[0]!.startsWith('éé'), 'a long line is cut on a character');
  t.equal((await run('for (;;) ins.log("x".repeat(100000))')).outcome, 'timeout', 'an endless flood ends at the deadline');
  t.match(await run('return "x".repeat(70000)'), { outcome: 'error', error: { message: /result is 70002 bytes/ } });
  const replacement = await run('ins.log("\\uFFFD".repeat(10000)); ins.log("a\\uFFFD")');
  t.equal(replacement.logs[0], '\uFFFD'.repeat(2730), 'a line of U+FFFD is cut on a character, its characters kept');
  t.equal(replacement.logs[1], 'a\uFFFD', 'and a short one is as it was logged');
  // Nested thousands deep, a few kilobytes of JSON took the host's own recursion past its stack: a 500 for
  // a run by hand, or a false timeout.
  for (const depth of [65, 2500, 5000])
    t.match(
      await run(`let a = []; for (let i = 1; i < ${depth}; i++) a = [a]; return a`, null, 5000),
      {
        outcome: 'error',
        error: { name: 'RangeError', message: `the result nests arrays and objects ${depth} levels deep; at most 64 are answered` },
      },
      `a result nested ${depth} deep`,
    );
  t.match(await run('let a = {}; for (let i = 1; i < 64; i++) a = {a, s: "[[[{{"}; return a'), { outcome: 'ok' }, '64 deep is answered');
});

t.test('what a script throws is no timeout, and costs no worker', async (t) => {
  t.match(await run('throw new InternalError("interrupted")'), { outcome: 'error', error: { message: 'interrupted' } });
  // A new thread loads QuickJS again, some 65 times the cost of a run: a script saying "out of memory" must
  // not be able to make the pool pay that on every run.
  // Once on every worker first: one whose memory an earlier test made grow is retired by it, once.
  await Promise.all([1, 2, 3, 4].map(() => run('throw new InternalError("out of memory")')));
  const before = pool.replaced;
  for (let i = 0; i < 4; i++) await run('throw new InternalError("out of memory")');
  t.equal(pool.replaced, before, 'the words "out of memory" retire no worker');
  t.equal((await run('const a = []; for (;;) a.push("x".repeat(1 << 20) + a.length);', null, 5000)).outcome, 'out_of_memory');
  t.ok(pool.replaced > before, 'memory that did run out retires its worker');
});

t.test('calls to the plant: at most 16 wait at once, and none is sent once the run has ended', async (t) => {
  let started = 0;
  let open = 0;
  let most = 0;
  const slow: HostApi = async (call, signal) => {
    if (signal.aborted) throw new Error('the run has ended');
    started++;
    most = Math.max(most, ++open);
    await new Promise((r) => setTimeout(r, 300));
    open--;
    return call.kind === 'values' ? [] : null;
  };
  const r = await pool.run(
    {
      code: `let refused = 0, taken = 0;
        const calls = [];
        for (let i = 0; i < 200; i++) calls.push(ins.write("c", "LD/LN.DO.da[CF]", i).then(() => taken++, (e) => { if (e.code === "too_many_calls") refused++; }));
        await Promise.all(calls);
        return { refused, taken }`,
      limits: { ...limits, deadlineMs: 5000 },
      state: null,
    },
    slow,
  );
  t.match(r, { outcome: 'ok', result: { taken: 16, refused: 184 } });
  t.equal(most, 16, 'sixteen at once reached the host');
  const sent = started;
  await pool.run({ code: 'for (let i = 0; i < 200; i++) ins.values("c").catch(() => {}); return 1', limits, state: null }, slow);
  await new Promise((r) => setTimeout(r, 200));
  t.ok(started - sent <= 16, `a run that did not wait sent at most 16 (${started - sent})`);
  t.match(
    await run('return (await ins.read("c", "LD/LN.DO.da[MX]")).value'),
    { outcome: 'ok', result: 21 },
    'the next run calls as before',
  );
});

t.test('the state is kept within its limit', async (t) => {
  const set = await run('const n = (ins.state.get()?.n ?? 0) + 1; ins.state.set({ n }); return n', '{"n":4}');
  t.match(set, { outcome: 'ok', result: 5, state: '{"n":5}' });
  const big = await run('try { ins.state.set("x".repeat(70000)) } catch (e) { return [e.name, e.message] } return "kept"', '{"n":5}');
  t.match(big, { outcome: 'ok', result: ['RangeError', /at most 65536/] });
  t.equal(big.state, undefined, 'the state past its limit is not kept, the old one stays');
  t.notOk('state' in (await run('return ins.state.get()', '{"n":5}')), 'a run that only reads leaves it as it is');
});

t.test('escapes: the host is not reachable', async (t) => {
  const probes = {
    'constructor.constructor': 'return constructor.constructor("return typeof process")()',
    'this.constructor.constructor': 'return this.constructor.constructor("return typeof require + typeof module")()',
    'an async function': 'return (async () => {}).constructor("return typeof process")().then((v) => v)',
    'a host function': 'return ins.read.constructor.constructor("return typeof process + typeof Deno")()',
    'a host answer': 'const v = await ins.read("c", "LD/LN.DO.da[MX]"); return v.constructor.constructor("return typeof process")()',
    'a host error':
      'try { await ins.operate("c", "LD/LN.DO", true) } catch (e) { return e.constructor.constructor("return typeof process")() }',
    Function: 'return Function("return typeof globalThis.process + typeof setTimeout + typeof fetch")()',
    eval: 'return eval("typeof require + typeof Buffer + typeof WebAssembly")',
    'Function from a prototype': 'return Object.getPrototypeOf(function () {}).constructor("return typeof queueMicrotask")()',
  };
  for (const [name, code] of Object.entries(probes)) {
    const r = await run(code);
    t.equal(r.outcome, 'ok', name);
    t.match(String(r.result), /^(undefined)+$/, `${name}: nothing of the host`);
  }
  const dynamic = await run('try { await import("node:fs"); return "imported" } catch (e) { return String(e) }');
  t.match(dynamic, { outcome: 'ok', result: /could not load module/ }, 'import() loads nothing');
  const worker = await run('try { await import("node:worker_threads"); return "imported" } catch (e) { return e.name }');
  t.not(worker.result, 'imported');
});

t.test('escapes: the global object holds the built-ins and ins, nothing else', async (t) => {
  const r = await run('return Object.getOwnPropertyNames(globalThis)');
  const standard = new Set(
    'Object Function Array Number parseFloat parseInt Infinity NaN undefined decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape isFinite isNaN Symbol Error EvalError RangeError ReferenceError SyntaxError TypeError URIError InternalError AggregateError Iterator Boolean String Math Reflect globalThis BigInt Date RegExp JSON Proxy Map Set WeakMap WeakSet ArrayBuffer SharedArrayBuffer Uint8ClampedArray Int8Array Uint8Array Int16Array Uint16Array Int32Array Uint32Array BigInt64Array BigUint64Array Float16Array Float32Array Float64Array DataView Promise WeakRef FinalizationRegistry eval ins'.split(
      ' ',
    ),
  );
  t.same(
    (r.result as string[]).filter((n) => !standard.has(n)),
    [],
    'no name beyond the language and ins',
  );
  const frozen = await run('"use strict"; try { ins.read = () => 1 } catch (e) { return [e.name, Object.isFrozen(ins)] }');
  t.same(frozen.result, ['TypeError', true], 'ins cannot be changed');
  const hidden = await run('return Object.getOwnPropertyNames(ins).sort()');
  t.same(hidden.result, ['log', 'now', 'operate', 'read', 'state', 'values', 'write'], 'ins shows only its functions');
});

t.test('escapes: hostile arguments run in the sandbox, the host only ever gets JSON text', async (t) => {
  calls.length = 0;
  const getter = await run('return ins.read({ get id() { for (;;) {} }, toJSON() { for (;;) {} } }, "x")');
  t.equal(getter.outcome, 'timeout', 'a toJSON that never returns: the deadline ends it');
  const throwing = await run('await ins.write("c", { toJSON() { throw new Error("nope") } }, 1)');
  t.match(throwing, { outcome: 'error', error: { message: 'nope' } });
  const shifty = await run(
    'let n = 0; const ref = { toJSON() { return n++ === 0 ? "LD/LN.DO.da[SP]" : "OTHER/LN.DO.da[SP]" } }; await ins.write("c", ref, 1); return n',
  );
  t.equal(shifty.result, 1, 'each argument is read once');
  t.match(calls.at(-1), { kind: 'write', reference: 'LD/LN.DO.da[SP]' });
  const toStr = await run('ins.log({ toString() { for (;;) {} } }, { toJSON() { return "shown" } }); return 1');
  t.match(toStr, { outcome: 'ok', logs: ['{} "shown"'] }, 'log shows JSON, never calls toString of a value JSON shows');
  const bad = await run('try { await ins.read(42, "x") } catch (e) { return [e.name, e.message] }');
  t.match(bad.result, ['TypeError', /connection id/], 'arguments of the wrong type are refused in the sandbox');
  t.equal(calls.filter((c) => (c as { connectionId: unknown }).connectionId === 42).length, 0, 'and never reach the host');
});

t.test('escapes: promises that never settle, and loops in host-call callbacks', async (t) => {
  const never = await run('await new Promise(() => {})');
  t.match(never, { outcome: 'error', error: { message: /nothing can settle/ } });
  t.ok(never.durationMs < limits.deadlineMs, 'answered at once, not at the deadline');
  const chained = await run('ins.values("c").then(() => { for (;;) {} }); await new Promise(() => {})');
  t.equal(chained.outcome, 'timeout', 'an endless loop in a host call callback');
  const rejected = await run('await ins.operate("c", "LD/LN.DO", true).catch(() => { for (;;) {} })');
  t.equal(rejected.outcome, 'timeout', 'in a rejection handler');
  const refusal = await run(
    'try { await ins.operate("c", "LD/LN.DO", true, { select: true }) } catch (e) { return [e.code, e.status, e.message, e.deviceError] }',
  );
  t.same(refusal.result, [
    'device_refused',
    502,
    'The device refused: Blocked-by-interlocking',
    { service: 'operate', error: 'object-access-denied', addCause: 'Blocked-by-interlocking' },
  ]);
  t.match(calls.at(-1), { kind: 'operate', options: { select: true } });
  t.match(await run('await ins.operate("c", "LD/LN.DO", true, { selekt: true })'), { outcome: 'error', error: { name: 'TypeError' } });
});

t.test('escapes: nothing of a run is there in the next', async (t) => {
  const code =
    'const seen = [typeof globalThis.leak, ({}).polluted, [1, 2].map((v) => v * 2).join(), typeof JSON.parse("1")];\n' +
    'globalThis.leak = 1; Object.prototype.polluted = "yes"; Array.prototype.map = () => "hijacked"; JSON.parse = () => "x";\n' +
    'Object.freeze(Object.prototype); return seen';
  const clean = ['undefined', null, '2,4', 'number'];
  t.same((await run(code)).result, clean, 'the first run sees the built-ins');
  t.same((await run(code)).result, clean, 'the second run, on the same worker or another, too');
  t.same((await run(code)).result, clean);
});

t.test('a worker that does not come back is terminated and replaced', async (t) => {
  const before = pool.replaced;
  const started = Date.now();
  const hung = await pool.runHanging({ code: 'return 1', limits: { ...limits, deadlineMs: 200 }, state: null });
  t.match(hung, { outcome: 'timeout', error: { message: /terminated/ } });
  t.ok(Date.now() - started < 200 + 1500, 'ended soon after its deadline and grace');
  t.equal(pool.replaced, before + 1);
  // A generous deadline: the replacement worker may still be starting on a loaded machine.
  const results = await Promise.all([run('return 1', null, 10_000), run('return 2', null, 10_000), run('return 3', null, 10_000)]);
  t.same(
    results.map((r) => r.result),
    [1, 2, 3],
    'the pool runs on',
  );
});

/** A script that reads what a run could have changed: the global object, the prototypes, the built-ins' behaviour. */
const probe = `
const names = (o) => Object.getOwnPropertyNames(o).sort().join(',');
const frozen = (o) => Object.isFrozen(o) + ',' + Object.isExtensible(o);
const out = [names(globalThis), names(Object.prototype), names(Array.prototype), names(Function.prototype), names(String.prototype),
  names(Promise.prototype), names(JSON), names(Math), frozen(Object.prototype), frozen(Array.prototype),
  [3, 1, 2].map((v) => v + 1).sort().join(), JSON.stringify({ a: [1, "x"] }), String(Object.keys({ k: 1 })), typeof ({}).x,
  Function.prototype.toString.call(Array.prototype.map), String(Symbol.iterator in Array.prototype)];
for (const k in {}) out.push('enumerable ' + k);
return out;`;

const mutation = fc.oneof(
  fc
    .record({
      target: fc.constantFrom(
        'globalThis',
        'Object.prototype',
        'Array.prototype',
        'Function.prototype',
        'String.prototype',
        'JSON',
        'Math',
        'Promise.prototype',
      ),
      name: fc.constantFrom('x', 'map', 'toString', 'parse', 'then', 'sort', 'keys', 'leak', 'constructor', 'stringify'),
      value: fc.jsonValue({ maxDepth: 1 }),
    })
    .map(({ target, name, value }) => `${target}[${JSON.stringify(name)}] = ${JSON.stringify(value)};`),
  fc.constantFrom(
    'Object.freeze(Object.prototype);',
    'Object.preventExtensions(Array.prototype);',
    'Object.defineProperty(Object.prototype, "x", { get() { return 1 }, enumerable: true });',
    'delete Array.prototype.map;',
    'Array.prototype.sort = function () { return this };',
    'Promise.prototype.then = function () { return this };',
    'globalThis.Symbol = undefined;',
    'Function.prototype.toString = () => "fake";',
    'Object.setPrototypeOf(Array.prototype, null);',
    'globalThis.ins2 = globalThis;',
  ),
);

t.test('property: no state leaks from one run into the next', async (t) => {
  const baseline = (await run(probe)).result;
  t.equal((baseline as unknown[]).length > 10, true, 'the probe reads the built-ins');
  await fc.assert(
    fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 8 }), async (steps) => {
      const mutate = steps.map((s) => `try { ${s} } catch (e) {}`).join('\n');
      await Promise.all([run(mutate), run(mutate)]);
      const after = await Promise.all([run(probe), run(probe)]);
      return after.every((r) => r.outcome === 'ok' && JSON.stringify(r.result) === JSON.stringify(baseline));
    }),
    { numRuns: 40 },
  );
});
