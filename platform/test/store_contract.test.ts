import pg from 'pg';
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { storeTargets, type StoreTarget, type TestStore } from '@scada/testkit/stores';
import { migrate } from '../src/store/migrate.ts';
import { PgStore } from '../src/store/pg_store.ts';
import { ConstraintViolation, type ConstraintKind, type Migration, type Store, StoreUnavailableError } from '../src/store/store.ts';

/** A store of `target` for one test, cleaned up when the test ends: for a test that closes it or cuts its connections. */
async function fresh(t: Test, target: StoreTarget): Promise<TestStore> {
  const made = await target.make();
  t.teardown(() => made.cleanup());
  return made;
}

/** What a test may leave in the database: its schemas (`public`'s tables, `m` of the migrations) and what is in them. */
async function emptyDatabase(store: Store): Promise<void> {
  await store.query('drop schema if exists m cascade; drop schema public cascade; create schema public');
}

/** Every schema but PostgreSQL's own, and every relation, type and function in them: `public` alone, empty, on a new database. */
async function leftovers(store: Store): Promise<string[]> {
  const { rows } = await store.query<{ what: string }>(
    `select 'schema ' || nspname as what from pg_namespace n
       where nspname not like 'pg\\_%' and nspname <> 'information_schema' and nspname <> 'public'
     union all
     select 'relation ' || relname from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public'
     union all
     select 'type ' || typname from pg_type y join pg_namespace n on n.oid = y.typnamespace where n.nspname = 'public'
     union all
     select 'function ' || proname from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'public'
     order by 1`,
  );
  return rows.map((r) => r.what);
}

async function counterTable(store: Store): Promise<void> {
  await store.query('create table counter (id int primary key, n int not null)');
  await store.query('insert into counter values (1, 0)');
}

const twoMigrations: Migration[] = [
  { id: '0002_second', sql: "insert into m.log (what) values ('second')" },
  { id: '0001_first', sql: "create table m.log (what text not null); insert into m.log (what) values ('first')" },
];

/** Ends every other session on the database of `url`, as a server restart would. */
async function terminateOthers(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
  } finally {
    await admin.end();
  }
}

for (const target of storeTargets()) {
  t.test(target.name, async (t) => {
    // One store for every test that neither closes it nor cuts its connections, emptied before each: what a
    // new store would offer the test, without a new one's cost (on the embedded store a start from the
    // template, about 0.4 CPU-s and 200 MB each; on PostgreSQL a database created and dropped with FORCE).
    const shared = await target.make();
    t.teardown(() => shared.cleanup());
    /** The shared store, emptied for this test; that nothing is left of the tests before is asserted. */
    async function emptied(t: Test): Promise<TestStore> {
      await emptyDatabase(shared.store);
      t.same(await leftovers(shared.store), [], 'the test starts on an empty database');
      return shared;
    }

    t.test('parameters are bound as values, never spliced into the SQL', async (t) => {
      const { store } = await emptied(t);
      await store.query('create table note (id int primary key, body text)');
      const evil = "x'); drop table note; --";
      const inserted = await store.query('insert into note values ($1, $2), ($3, $4)', [1, evil, 2, 'plain']);
      t.equal(inserted.rowCount, 2);
      const { rows, rowCount } = await store.query<{ body: string }>('select body from note where id = $1', [1]);
      t.same(rows, [{ body: evil }]);
      t.equal(rowCount, 1);
      t.equal((await store.query('update note set body = $1', ['y'])).rowCount, 2);
    });

    t.test("a failed statement's error carries no parameter values", async (t) => {
      const { store } = await emptied(t);
      await store.query('create table secret_note (id int primary key, body text not null)');
      const err = (await store
        .query('insert into secret_note values ($1, $2), ($1, $2)', [1, 'hush-hush-value'])
        .catch((e: unknown) => e)) as Record<string, unknown>;
      t.ok(err instanceof Error, 'the duplicate key fails');
      t.notOk('params' in err, 'no params on the error');
      t.notMatch(JSON.stringify({ ...err, message: err.message }), /hush-hush-value/);
    });

    t.test('both stores answer int8, date and interval as strings, bytea as a Buffer, timestamptz as a Date', async (t) => {
      const { store } = await emptied(t);
      const { rows } = await store.query(
        `select $1::int8 + 1 as big, array[1, 2]::int8[] as bigs, $2::bytea as bytes, $3::timestamptz as at, $4::jsonb as doc,
          '2024-02-29'::date as day, array['2024-02-29'::date] as days, '1 day 02:00:00'::interval as span, 1.5::numeric as num`,
        ['9007199254740993', Buffer.from([1, 2]), new Date(0), { a: [1] }],
      );
      const row = rows[0]!;
      t.same(
        { big: row.big, bigs: row.bigs, at: row.at, doc: row.doc, day: row.day, days: row.days, span: row.span, num: row.num },
        {
          big: '9007199254740994',
          bigs: ['1', '2'],
          at: new Date(0),
          doc: { a: [1] },
          day: '2024-02-29',
          days: ['2024-02-29'],
          span: '1 day 02:00:00',
          num: '1.5',
        },
      );
      t.ok(Buffer.isBuffer(row.bytes));
      t.ok(row.at instanceof Date);
    });

    t.test('a bytea parameter goes in byte for byte on both stores: a Buffer, a view into a larger buffer, none', async (t) => {
      const { store } = await emptied(t);
      const all = Buffer.alloc(256);
      for (let i = 0; i < all.length; i++) all[i] = i;
      const whole = Buffer.concat([all, all, all]);
      // A view that starts and ends inside its buffer: only its own bytes may go in.
      const view = new Uint8Array(whole.buffer, whole.byteOffset + 3, 500);
      const { rows } = await store.query(
        'select $1::bytea as whole, $2::bytea as view, $3::bytea as none, length($1::bytea) as n, md5($2::bytea) as sum',
        [whole, view, Buffer.alloc(0)],
      );
      const row = rows[0]!;
      t.ok(Buffer.isBuffer(row.whole) && (row.whole as Buffer).equals(whole), 'every byte value in order');
      t.ok(Buffer.isBuffer(row.view) && (row.view as Buffer).equals(Buffer.from(view)), "a view's own bytes, not its buffer's");
      t.equal((row.none as Buffer).length, 0, 'no bytes');
      t.equal(row.n, 768);
      t.equal(row.sum, createHash('md5').update(view).digest('hex'), 'the store hashed the same bytes');
    });

    t.test('a broken constraint is one typed error on both stores, naming its kind and constraint but no value', async (t) => {
      const { store } = await emptied(t);
      await store.query('create table parent (k text primary key)');
      await store.query('create table child (k text primary key, parent text not null references parent (k), n int check (n > 0))');
      await store.query('insert into parent values ($1)', ['secret-parent']);
      const cases: [string, unknown[], ConstraintKind][] = [
        ['insert into parent values ($1)', ['secret-parent'], 'unique'],
        ['insert into child values ($1, $2, 1)', ['c1', 'secret-missing'], 'foreign_key'],
        ['insert into child values ($1, null, 1)', ['c2'], 'not_null'],
        ['insert into child values ($1, $2, -1)', ['c3', 'secret-parent'], 'check'],
      ];
      for (const [sql, params, kind] of cases) {
        const err = await store.query(sql, params).catch((e: unknown) => e);
        t.ok(err instanceof ConstraintViolation, `${kind}: a ConstraintViolation`);
        t.match(err, { kind, code: /^23/ }, `${kind}: its kind and SQLSTATE`);
        t.notMatch((err as Error).message, /secret/, `${kind}: no value in the message`);
        t.notOk(err instanceof StoreUnavailableError);
      }
      const unique = (await store
        .query('insert into parent values ($1)', ['secret-parent'])
        .catch((e: unknown) => e)) as ConstraintViolation;
      t.equal(unique.constraint, 'parent_pkey', 'the constraint is named');
      const inTx = await store
        .transaction(async (tx) => tx.query('insert into parent values ($1)', ['secret-parent']))
        .catch((e: unknown) => e);
      t.ok(inTx instanceof ConstraintViolation && inTx.kind === 'unique', 'the same inside a transaction');
      t.equal((await store.query('select count(*)::int as n from child')).rows[0]?.n, 0, 'nothing was stored');
    });

    t.test('any other SQL error reaches the caller unchanged, with its SQLSTATE code', async (t) => {
      const { store } = await emptied(t);
      const err = await store.query('select * from no_such_table where k = $1', ['a']).catch((e: unknown) => e);
      t.match(err, { code: '42P01' });
      t.notOk(err instanceof ConstraintViolation);
      t.notOk(err instanceof StoreUnavailableError);
    });

    t.test('a transaction that resolves commits every statement', async (t) => {
      const { store } = await emptied(t);
      await counterTable(store);
      const value = await store.transaction(async (tx) => {
        await tx.query('update counter set n = n + $1 where id = 1', [5]);
        await tx.query('insert into counter values ($1, $2)', [2, 7]);
        return 'done';
      });
      t.equal(value, 'done');
      t.same((await store.query('select id, n from counter order by id')).rows, [
        { id: 1, n: 5 },
        { id: 2, n: 7 },
      ]);
    });

    t.test('a transaction that throws leaves nothing behind and rethrows the same error', async (t) => {
      const { store } = await emptied(t);
      await counterTable(store);
      const boom = new Error('boom');
      const err = await store
        .transaction(async (tx) => {
          await tx.query('update counter set n = 99 where id = 1');
          await tx.query('insert into counter values (2, 2)');
          throw boom;
        })
        .catch((e: unknown) => e);
      t.equal(err, boom);
      t.same((await store.query('select id, n from counter')).rows, [{ id: 1, n: 0 }]);
    });

    t.test('a transaction whose failed statement was caught still fails, and commits nothing', async (t) => {
      const { store } = await emptied(t);
      await counterTable(store);
      const attempt = store.transaction(async (tx) => {
        await tx.query('update counter set n = 1');
        await tx.query('select * from missing_table').catch(() => undefined);
      });
      await t.rejects(attempt, /rolled back instead of committed/i);
      t.same((await store.query('select n from counter')).rows, [{ n: 0 }]);
    });

    t.test('a transaction refuses statements once it has ended', async (t) => {
      const { store } = await emptied(t);
      let leaked: { query(sql: string): Promise<unknown> } | undefined;
      await store.transaction(async (tx) => {
        leaked = tx;
      });
      await t.rejects(leaked!.query('select 1'));
    });

    t.test('50 concurrent read-modify-write transactions count exactly 50', async (t) => {
      const { store } = await emptied(t);
      await counterTable(store);
      await store.query('create table seen (n int)');
      const increments = Array.from({ length: 50 }, () =>
        store.transaction(async (tx) => {
          const { rows } = await tx.query<{ n: number }>('select n from counter where id = 1 for update');
          await tx.query('update counter set n = $1 where id = 1', [rows[0]!.n + 1]);
        }),
      );
      const reads = Array.from({ length: 50 }, (_, i) => store.query('insert into seen values ($1)', [i]));
      await Promise.all([...increments, ...reads]);
      t.same((await store.query('select n from counter')).rows, [{ n: 50 }]);
      t.same((await store.query('select count(*)::int as c from seen')).rows, [{ c: 50 }]);
    });

    t.test(
      'on the embedded store bulk work waits while other work waits: a statement and a transaction go before the bulk queued ahead of them',
      async (t) => {
        const { store } = await emptied(t);
        await store.query('create table done (what text, n serial)');
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const finished: string[] = [];
        // Five bulk transactions, each held until the gate opens: on the embedded store the first holds the
        // database and the other four wait their turn; on PostgreSQL each holds a connection of the pool.
        const bulk = Array.from({ length: 5 }, (_, i) =>
          store
            .bulk()
            .transaction(async (tx) => {
              await tx.query('insert into done (what) values ($1)', [`bulk ${i}`]);
              await gate;
            })
            .then(() => void finished.push(`bulk ${i}`)),
        );
        const statement = store.query("insert into done (what) values ('statement')").then(() => void finished.push('statement'));
        const transaction = store
          .transaction((tx) => tx.query("insert into done (what) values ('transaction')"))
          .then(() => void finished.push('transaction'));
        await new Promise((resolve) => setImmediate(resolve));
        release();
        await Promise.all([...bulk, statement, transaction]);
        const at = (what: string) => finished.indexOf(what);
        // PostgreSQL runs them side by side on the pool, in no order the store decides.
        if (store.kind === 'pglite')
          for (const i of [1, 2, 3, 4]) {
            t.ok(at('statement') < at(`bulk ${i}`), `the statement answered before bulk ${i} (${finished.join(', ')})`);
            t.ok(at('transaction') < at(`bulk ${i}`), `the transaction answered before bulk ${i}`);
          }
        const { rows } = await store.bulk().query<{ c: number }>('select count(*)::int as c from done');
        t.same(rows, [{ c: 7 }], 'the bulk lane reads the same database');
      },
    );

    t.test(
      'on the embedded store work of the first lane goes ahead of every caller waiting: urgent work queued before it and bulk work past its patience',
      async (t) => {
        const { store } = await emptied(t);
        await store.query('create table done (what text, n serial)');
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const finished: string[] = [];
        // A transaction holds the database until the gate opens; meanwhile 20 statements and 3 bulk
        // statements queue up (the bulk ones waited more than their patience), then a first-lane statement.
        const holder = store.transaction(async (tx) => {
          await tx.query("insert into done (what) values ('holder')");
          await gate;
        });
        const queued = [
          ...Array.from({ length: 20 }, (_, i) =>
            store.query('insert into done (what) values ($1)', [`urgent ${i}`]).then(() => void finished.push(`urgent ${i}`)),
          ),
          ...Array.from({ length: 3 }, (_, i) =>
            store
              .bulk()
              .query('insert into done (what) values ($1)', [`bulk ${i}`])
              .then(() => void finished.push(`bulk ${i}`)),
          ),
        ];
        // The bulk statements wait past their patience (the embedded store's `bulkPatienceMs`, 1 s) and 100 ms
        // more. PostgreSQL has no turns to wait past: no wait there.
        if (store.kind === 'pglite') {
          const { bulkPatienceMs } = await import('../src/store/pglite_store.ts');
          await new Promise((resolve) => setTimeout(resolve, bulkPatienceMs + 100));
        }
        const first = store
          .first()
          .query<{ n: number }>("insert into done (what) values ('first') returning n")
          .then((r) => (finished.push('first'), r.rows[0]?.n));
        const firstTx = store
          .first()
          .transaction((tx) => tx.query("insert into done (what) values ('first transaction')"))
          .then(() => void finished.push('first transaction'));
        await new Promise((resolve) => setImmediate(resolve));
        release();
        await Promise.all([holder, ...queued, first, firstTx]);
        // PostgreSQL runs them side by side on the pool, in no order the store decides.
        if (store.kind === 'pglite') {
          t.same(
            finished.slice(0, 2),
            ['first', 'first transaction'],
            `the first lane answered before every other (${finished.join(', ')})`,
          );
          t.equal(await first, 2, 'and its statement ran second, right after the transaction that held the database');
        }
        const { rows } = await store.first().query<{ c: number }>('select count(*)::int as c from done');
        t.same(rows, [{ c: 26 }], 'the first lane reads the same database');
      },
    );

    t.test("a statement outside a transaction never joins another caller's open transaction", async (t) => {
      const { store } = await emptied(t);
      await store.query('create table mark (who text)');
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const failing = store.transaction(async (tx) => {
        await tx.query("insert into mark values ('inside')");
        entered();
        await held;
        throw new Error('roll back');
      });
      // Another caller, from its own async context, while the transaction is open.
      await inside;
      const outside = store.query("insert into mark values ('outside')");
      await new Promise((resolve) => setTimeout(resolve, 50));
      release();
      await t.rejects(failing, /roll back/);
      await outside;
      t.same((await store.query('select who from mark')).rows, [{ who: 'outside' }]);
    });

    t.test('migrations run twice apply once', async (t) => {
      const { store } = await emptied(t);
      t.same(await migrate(store, 'm', twoMigrations), ['0001_first', '0002_second']);
      t.same(await migrate(store, 'm', twoMigrations), []);
      t.same((await store.query('select what from m.log order by what')).rows, [{ what: 'first' }, { what: 'second' }]);
      t.same((await store.query('select id from m.schema_migrations order by id')).rows, [{ id: '0001_first' }, { id: '0002_second' }]);
    });

    t.test('a new migration is applied on top of the recorded ones', async (t) => {
      const { store } = await emptied(t);
      await migrate(store, 'm', twoMigrations.slice(1, 2));
      t.same(await migrate(store, 'm', [...twoMigrations, { id: '0003_third', sql: "insert into m.log values ('third')" }]), [
        '0002_second',
        '0003_third',
      ]);
    });

    t.test('two migrate() calls at once both succeed and apply each migration once', async (t) => {
      const made = await emptied(t);
      // On PostgreSQL, as two replicas: a second pool of its own.
      const other = made.url === undefined ? made.store : await PgStore.connect(made.url);
      if (other !== made.store) t.teardown(() => other.close());
      const slow: Migration[] = [{ id: '0000_slow', sql: 'select pg_sleep(0.2)' }, ...twoMigrations];
      const [a, b] = await Promise.all([migrate(made.store, 'm', slow), migrate(other, 'm', slow)]);
      t.same([...a, ...b].sort(), ['0000_slow', '0001_first', '0002_second']);
      t.same((await made.store.query('select what from m.log order by what')).rows, [{ what: 'first' }, { what: 'second' }]);
    });

    t.test('a failing migration rolls back the whole run and leaves nothing applied', async (t) => {
      const { store } = await emptied(t);
      const broken: Migration[] = [...twoMigrations, { id: '0003_broken', sql: 'insert into m.nowhere values (1)' }];
      await t.rejects(migrate(store, 'm', broken), { message: /migration m\/0003_broken failed/, code: '42P01' });
      t.same((await store.query("select to_regclass('m.schema_migrations') as t, to_regclass('m.log') as l")).rows, [{ t: null, l: null }]);
      t.same(await migrate(store, 'm', twoMigrations), ['0001_first', '0002_second']);
    });

    t.test('migrate refuses a schema name that is not an identifier', async (t) => {
      const { store } = await emptied(t);
      await t.rejects(migrate(store, 'm; drop schema public', []), /not a schema name/);
      await t.rejects(migrate(store, 'Auth', []), /not a schema name/);
    });

    if (target.name === 'postgres') {
      t.test('connections the server terminates fail as unavailable and are replaced', async (t) => {
        const { store, url } = await fresh(t, target);
        await Promise.all([1, 2, 3].map(() => store.query('select pg_sleep(0.05)')));
        let opened!: () => void;
        const inside = new Promise<void>((resolve) => (opened = resolve));
        const cut = store.transaction(async (tx) => {
          await tx.query('select 1');
          opened();
          await new Promise((resolve) => setTimeout(resolve, 300));
          await tx.query('select 2');
        });
        await inside;
        await terminateOthers(url!);
        await t.rejects(cut, StoreUnavailableError);
        await new Promise((resolve) => setTimeout(resolve, 100));
        t.equal(await store.ping(), true);
        t.same((await store.query('select 1 as one')).rows, [{ one: 1 }]);
      });
    }

    t.test('ping answers true while open, false once closed, and a closed store is unavailable', async (t) => {
      const { store } = await fresh(t, target);
      t.equal(await store.ping(), true);
      await Promise.all([store.close(), store.close()]);
      t.equal(await store.ping(), false);
      await t.rejects(store.query('select 1'), StoreUnavailableError);
      await t.rejects(
        store.transaction(async () => undefined),
        StoreUnavailableError,
      );
    });
  });
}

t.test('a PgStore whose server does not answer reports it promptly', async (t) => {
  const store = await PgStore.connect('postgres://postgres@127.0.0.1:9/none', { timeoutMs: 1000 });
  t.teardown(() => store.close());
  const started = Date.now();
  t.equal(await store.ping(), false);
  await t.rejects(store.query('select 1'), StoreUnavailableError);
  await t.rejects(
    store.transaction(async () => undefined),
    StoreUnavailableError,
  );
  t.ok(Date.now() - started < 3000, 'within three seconds');
});
