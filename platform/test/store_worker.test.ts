/**
 * The embedded store on a worker thread (`thread: 'worker'`) answers as the one on the main thread: a
 * statement's error with its SQLSTATE, a broken constraint as a `ConstraintViolation`, a transaction that
 * throws rolled back; a worker that ends fails the calls waiting on it and every later one with
 * `StoreUnavailableError` instead of leaving them waiting; close releases the folder. And the bound of the
 * store's turns, on both threads: a caller past a full lane is refused at once with
 * `StoreOverloadedError`, which the platform answers 503 `overloaded` with `Retry-After`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { compileStoresAsPlatform, pgliteTemplate } from '@scada/testkit/stores';
import { PGliteStore } from '../src/store/pglite_store.ts';
import { ConstraintViolation, copyField, StoreOverloadedError, StoreUnavailableError } from '../src/store/store.ts';
import { toProblem } from '../src/rpc.ts';

t.setTimeout(600_000);
// The stores' WebAssembly compiled as a started platform compiles it (the baseline compiler unless
// `EMBEDDED_STORE_COMPILER=optimizing`); V8's flags are the process's, so the worker threads' stores too.
compileStoresAsPlatform();

/**
 * One store on each thread for the tests that neither close it nor start it with settings of their own,
 * made when first asked for and emptied before each test: what a new store would offer the test, without
 * a new one's cost (a start from the template: 0.4-0.9 CPU-s and 200 MB each, a worker's the dearer).
 */
const sharedStores = new Map<'main' | 'worker', Promise<PGliteStore>>();
t.teardown(async () => {
  for (const store of sharedStores.values()) await (await store).close();
});

/** The shared store of `thread`, emptied for this test; that nothing is left of the tests before is asserted. */
async function sharedStore(t: Test, thread: 'main' | 'worker'): Promise<PGliteStore> {
  let made = sharedStores.get(thread);
  if (made === undefined) {
    made = pgliteTemplate().then((template) => PGliteStore.memory({ thread, template, checkNesting: true }));
    sharedStores.set(thread, made);
  }
  const store = await made;
  await store.query('drop schema public cascade; create schema public');
  const { rows } = await store.query(
    `select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public'
     union all select p.proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'public'`,
  );
  t.same(rows, [], 'the test starts on an empty database');
  return store;
}

/**
 * One data folder for the tests that close a store on disk and open it again (each writes a table of its
 * own): the first of them to run creates the database there from the template, the others open it, at a
 * tenth of the cost of writing a new database's 40 MB to the disk (1.6 CPU-s and more on a busy disk).
 */
const folder = await mkdtemp(join(tmpdir(), 'scada-store-worker-'));
t.teardown(() => rm(folder, { recursive: true, force: true }));

t.test('statements, errors and transactions on the worker answer as on the main thread', async (t) => {
  const store = await sharedStore(t, 'worker');
  t.equal(store.thread, 'worker');
  await store.query('create table w (id int primary key, b bytea, n int8, d date, j jsonb)');
  await store.query('insert into w values ($1, $2, $3, $4, $5)', [1, Buffer.from('ab'), '9007199254740993', '2026-11-29', { a: [1] }]);
  const { rows, rowCount } = await store.query('select * from w');
  t.equal(rowCount, 1);
  t.ok(Buffer.isBuffer(rows[0]?.b), 'bytea is a Buffer, as on the main thread and PostgreSQL');
  t.equal(
    (rows[0]?.b as Buffer | undefined)?.buffer.byteLength,
    2,
    "a small bytea crosses alone, not with the worker thread's buffer pool",
  );
  t.same(rows[0], { id: 1, b: Buffer.from('ab'), n: '9007199254740993', d: '2026-11-29', j: { a: [1] } });

  const statement = await store.query('select nope from w').catch((err: unknown) => err);
  t.equal((statement as { code?: string }).code, '42703', 'a statement error keeps its SQLSTATE');
  t.match((statement as Error).message, /column "nope" does not exist/);
  t.notOk('params' in (statement as object), 'no parameters travel with the error');

  const constraint = await store.query('insert into w (id) values ($1)', [1]).catch((err: unknown) => err);
  t.type(constraint, ConstraintViolation);
  t.equal((constraint as ConstraintViolation).kind, 'unique');
  t.equal((constraint as ConstraintViolation).constraint, 'w_pkey');
  t.equal((constraint as ConstraintViolation).code, '23505');

  const failed = await store
    .transaction(async (tx) => {
      await tx.query('insert into w (id) values (2)');
      throw new Error('changed my mind');
    })
    .catch((err: unknown) => err);
  t.match(failed, { message: 'changed my mind' }, 'the transaction rethrows');
  t.same((await store.query('select id from w order by id')).rows, [{ id: 1 }], 'and was rolled back');

  const broken = await store
    .transaction(async (tx) => {
      await tx.query('insert into w (id) values (3)');
      await tx.query('insert into w (id) values (1)');
    })
    .catch((err: unknown) => err);
  t.type(broken, ConstraintViolation, 'a constraint broken inside a transaction');
  t.same((await store.query('select id from w order by id')).rows, [{ id: 1 }], 'rolled back too');

  let kept: { query(sql: string): Promise<unknown> } | undefined;
  const committed = await store.transaction(async (tx) => {
    kept = tx;
    await tx.query('insert into w (id) values (4)');
    return (await tx.query('select count(*)::int as n from w')).rows[0];
  });
  t.same(committed, { n: 2 });
  await t.rejects(kept!.query('select 1'), /Transaction is closed/, 'a tx refuses statements once it ended');
  await t.rejects(
    store.transaction(() => store.query('select 1')),
    /a store call inside a transaction of the same store/,
    'the inside-a-transaction guard holds',
  );
  t.ok(await store.ping());
  t.ok((await store.dump()).size > 0, 'a dump comes back from the worker');
});

t.test('a worker that ends fails its waiting calls and every later one with StoreUnavailableError', async (t) => {
  const lost: unknown[] = [];
  const store = await PGliteStore.memory({
    thread: 'worker',
    template: await pgliteTemplate(),
    testHooks: true,
    onLost: (err) => lost.push(err),
  });
  t.teardown(() => store.close());
  await store.query('select 1');
  const waiting = store.bulk().query('select pg_sleep(0.2)');
  await store.endWorkerForTests();
  await t.rejects(waiting, StoreUnavailableError, 'a call in flight');
  await t.rejects(store.query('select 1'), StoreUnavailableError, 'a call after');
  await t.rejects(
    store.transaction(async (tx) => tx.query('select 1')),
    StoreUnavailableError,
    'a transaction after',
  );
  t.equal(await store.ping(), false, 'ping answers false');
  await store.close();
  await t.rejects(store.query('select 1'), StoreUnavailableError, 'closed');
  t.equal(lost.length, 1, 'the loss is told once, so that the process can stop');
  t.type(lost[0], StoreUnavailableError);
});

t.test('a worker store closed as asked is not told lost', async (t) => {
  const lost: unknown[] = [];
  const store = await PGliteStore.memory({ thread: 'worker', template: await pgliteTemplate(), onLost: (err) => lost.push(err) });
  await store.query('select 1');
  await store.close();
  t.same(lost, [], 'no loss on close');
});

t.test('close ends the worker, releases the folder, and the data is there when opened again', async (t) => {
  const dataDir = folder;
  const template = await pgliteTemplate();
  const store = await PGliteStore.open(dataDir, { thread: 'worker', template });
  await store.query('create table kept (v text)');
  await store.query('insert into kept values ($1)', ['x']);
  await store.close();
  await store.close();
  t.notOk(existsSync(join(dataDir, 'pgdata.lock')), 'the lock is released');
  await t.rejects(store.query('select 1'), StoreUnavailableError);
  const again = await PGliteStore.open(dataDir, { thread: 'main' });
  t.same((await again.query('select v from kept')).rows, [{ v: 'x' }], 'written through the worker, read on the main thread');
  await again.close();
});

t.test('a worker that cannot open its database fails the open', async (t) => {
  const broken = new Blob([new Uint8Array(1024).fill(7)]);
  await t.rejects(PGliteStore.memory({ thread: 'worker', template: broken }));
});

for (const thread of ['main', 'worker'] as const) {
  t.test(`${thread} thread: a lane past its bound refuses at once with StoreOverloadedError`, async (t) => {
    const store = await PGliteStore.memory({ thread, template: await pgliteTemplate(), turnLimits: { urgent: 3, bulk: 2 } });
    t.teardown(() => store.close());
    // Bulk work always waits for a turn of the event loop first: two wait, the third is refused.
    const running = [store.bulk().query('select 1'), store.bulk().query('select 2')];
    const refused = await store
      .bulk()
      .query('select 3')
      .catch((err: unknown) => err);
    t.type(refused, StoreOverloadedError);
    t.type(refused, StoreUnavailableError, 'a kind of StoreUnavailableError');
    t.match((refused as Error).message, /bulk lane/);
    const urgent = [store.query('select 5'), store.query('select 6'), store.query('select 7')];
    await t.rejects(store.query('select 8'), StoreOverloadedError, 'the urgent lane has its own bound');
    await Promise.all([...running, ...urgent]);
    t.same((await store.bulk().query('select 9 as n')).rows, [{ n: 9 }], 'taken again once the lane has room');
    const problem = toProblem(refused);
    t.equal(problem.status, 503);
    t.equal(problem.code, 'overloaded');
    t.equal(problem.retryAfter, 1, 'with Retry-After');
  });
}

for (const thread of ['main', 'worker'] as const) {
  t.test(`${thread} thread: close waits for the transaction in progress, which commits`, async (t) => {
    const dataDir = folder;
    const store = await PGliteStore.open(dataDir, { thread, template: await pgliteTemplate() });
    const table = `during_close_${thread}`;
    let began!: () => void;
    const begun = new Promise<void>((done) => {
      began = done;
    });
    const committed = store.transaction(async (tx) => {
      await tx.query(`create table ${table} (v int)`);
      began();
      // The close below is asked for while this transaction still has statements to run.
      await new Promise((done) => setImmediate(done));
      await tx.query(`insert into ${table} values (1)`);
      return 'committed';
    });
    await begun;
    const closed = store.close();
    t.equal(await committed, 'committed', 'the transaction ends as it would have without the close');
    await closed;
    const again = await PGliteStore.open(dataDir, { thread: 'main' });
    t.teardown(() => again.close());
    t.same((await again.query(`select v from ${table}`)).rows, [{ v: 1 }], 'and what it wrote is there');
  });
}

t.test('a parameter that cannot reach the worker fails its call, and the store goes on', async (t) => {
  const store = await sharedStore(t, 'worker');
  const uncopyable = { a: 1, f: () => 1 };
  await t.rejects(store.query('select $1::jsonb as v', [uncopyable]), { name: 'DataCloneError' });
  await t.rejects(
    store.transaction((tx) => tx.query('select $1::jsonb as v', [uncopyable])),
    { name: 'DataCloneError' },
    'inside a transaction too, which is rolled back',
  );
  t.same((await store.query('select 1 as n')).rows, [{ n: 1 }]);
});

for (const thread of ['main', 'worker'] as const) {
  t.test(`${thread} thread: a deferred constraint broken at COMMIT is a ConstraintViolation`, async (t) => {
    const store = await sharedStore(t, thread);
    await store.query('create table parent (id int primary key)');
    await store.query('create table child (parent int constraint child_parent_fk references parent deferrable initially deferred)');
    const failed = await store.transaction((tx) => tx.query('insert into child values (5)')).catch((err: unknown) => err);
    t.type(failed, ConstraintViolation);
    t.match(failed, { kind: 'foreign_key', constraint: 'child_parent_fk', code: '23503' });
    t.notOk('params' in (failed as object), 'no parameters travel with the error');
    t.same((await store.query('select count(*)::int as n from child')).rows, [{ n: 0 }], 'and nothing was kept');
  });
}

for (const thread of ['main', 'worker'] as const) {
  t.test(`${thread} thread: a transaction of steps and COPY text commits whole, or not at all`, async (t) => {
    const store = await sharedStore(t, thread);
    await store.query('create table c (id int primary key, note text, j jsonb, b bytea)');
    const awkward = 'tab\there, line\nbreak, back\\slash, return\r, \\N as text';
    const text = [
      [1, awkward, { a: 'x\ty' }],
      [2, null, null],
    ]
      .map((row) => row.map(copyField).join('\t'))
      .join('\n');
    const results = await store.bulk().transactionOf!([
      { copy: { table: 'c', columns: ['id', 'note', 'j'], text: `${text}\n` } },
      { sql: 'update c set b = $1 where id = $2', params: [Buffer.from('ok'), 2] },
      { sql: 'select id, b from c where id = $1', params: [2] },
    ]);
    t.equal(results[0]?.rowCount, 2, "the COPY's rows are its rowCount");
    t.equal(results[1]?.rowCount, 1);
    t.same(results[2]?.rows, [{ id: 2, b: Buffer.from('ok') }], 'a step that reads answers its rows, a bytea as a Buffer');
    const { rows } = await store.query('select id, note, j from c order by id');
    t.same(rows, [
      { id: 1, note: awkward, j: { a: 'x\ty' } },
      { id: 2, note: null, j: null },
    ]);

    const failed = await store.transactionOf!([
      { copy: { table: 'c', columns: ['id', 'note'], text: '3\tthree\n' } },
      { copy: { table: 'c', columns: ['id', 'note'], text: '1\tagain\n' } },
    ]).catch((err: unknown) => err);
    t.ok(failed instanceof ConstraintViolation && failed.kind === 'unique', 'a COPY that breaks a key is a ConstraintViolation');
    t.equal((await store.query('select id from c where id = 3')).rowCount, 0, 'the steps before it were rolled back');

    const inTx = await store.transaction(async (tx) => {
      const n = await tx.copyRows!('c', ['id', 'note'], '4\tfour\n5\t\\N\n');
      return { n, seen: (await tx.query('select count(*)::int as n from c')).rows[0]?.n };
    });
    t.same(inTx, { n: 2, seen: 4 }, "a transaction's tx appends COPY text too");
  });
}

for (const thread of ['main', 'worker'] as const) {
  t.test(`${thread} thread: a statement waits for the one bulk transaction of steps running, not for those queued behind it`, async (t) => {
    const store = await sharedStore(t, thread);
    await store.query('create table done (what text, n serial)');
    const finished: string[] = [];
    // Five history-like batches, one turn each; the first is running (handed its turn a callback later).
    const bulk = Array.from({ length: 5 }, (_, i) =>
      store.bulk().transactionOf!([
        { sql: 'select pg_sleep(0.05)' },
        { sql: 'insert into done (what) values ($1)', params: [`bulk ${i}`] },
      ]).then(() => void finished.push(`bulk ${i}`)),
    );
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    // On the main thread a batch's turn may already be over by now and the next one running: the
    // statement waits for whichever runs when it comes, and goes before every batch queued behind it.
    const doneBefore = finished.length;
    const statement = store.query("insert into done (what) values ('statement')").then(() => void finished.push('statement'));
    await Promise.all([...bulk, statement]);
    const waitedFor = finished.indexOf('statement') - doneBefore;
    t.ok(waitedFor <= 1, `the statement waited for at most the one batch running (${finished.join(', ')})`);
    t.ok(finished.indexOf('statement') < 4, 'and went ahead of the batches queued');
    const { rows } = await store.query<{ what: string }>('select what from done order by n');
    t.same(
      rows.map((r) => r.what),
      finished,
      'each ran in its turn, in the order answered',
    );
  });
}
