/**
 * The read cache's rules, on the in-process versions of a real bus: nothing from the cache without
 * versions, nothing kept that a change overtook on its way, nothing older than the age bound, a write
 * through this gateway seen at once, the size bound, and If-None-Match as RFC 9110 reads it.
 */
import { MemoryBus, type SpaceVersions } from '@scada/platform';
import t from 'tap';
import { noneMatch, ReadCache } from '../src/read_cache.ts';

const settings = { maxAgeMs: 1000, maxChars: 1024 * 1024 };

/** A fetch that answers `text` and counts its calls. */
function source(text: () => string) {
  const counted = { calls: 0, fetch: async () => (counted.calls++, text()) };
  return counted;
}

t.test('a second read is a hit; another space or URL is not', async (t) => {
  const bus = new MemoryBus();
  const cache = new ReadCache(bus.spaceVersions(), settings);
  const s = source(() => '[1]');
  t.match(await cache.read('a', '/x', s.fetch), { text: '[1]', outcome: 'miss' });
  t.match(await cache.read('a', '/x', s.fetch), { text: '[1]', outcome: 'hit' });
  t.match(await cache.read('b', '/x', s.fetch), { outcome: 'miss' });
  t.match(await cache.read('a', '/y', s.fetch), { outcome: 'miss' });
  t.equal(s.calls, 3);
  t.match(await cache.read(null, '/x', s.fetch), { outcome: 'off' }, 'no space: never cached');
});

t.test('without versions nothing is answered from the cache', async (t) => {
  const bus = new MemoryBus();
  const versions = bus.spaceVersions();
  const s = source(() => '[]');
  const unheard: SpaceVersions = {
    ...versions,
    bump: versions.bump,
    follow: versions.follow,
    close: versions.close,
    stampOf: () => undefined,
  };
  const cache = new ReadCache(unheard, settings);
  for (let i = 0; i < 3; i++) t.match(await cache.read('a', '/x', s.fetch), { outcome: 'off' });
  t.equal(s.calls, 3);
  const closed = new ReadCache(bus.spaceVersions(), settings);
  await closed.read('a', '/x', s.fetch);
  await bus.close();
  t.match(await closed.read('a', '/x', s.fetch), { outcome: 'off' }, 'the bus closed: versions unknown');
  t.match(
    await new ReadCache(new MemoryBus().spaceVersions(), { ...settings, maxAgeMs: 0 }).read('a', '/x', s.fetch),
    { outcome: 'off' },
    'age 0: off',
  );
});

t.test('a bump or a write through this gateway drops what was read before it', async (t) => {
  const bus = new MemoryBus();
  const versions = bus.spaceVersions();
  const cache = new ReadCache(versions, settings);
  let value = 1;
  const s = source(() => `[${value}]`);
  await cache.read('a', '/x', s.fetch);
  value = 2;
  await versions.bump('a');
  t.match(await cache.read('a', '/x', s.fetch), { text: '[2]', outcome: 'miss' }, 'after a bump');
  value = 3;
  cache.written('a');
  t.match(await cache.read('a', '/x', s.fetch), { text: '[3]', outcome: 'miss' }, 'after a local write');
  await versions.bump('b');
  t.match(await cache.read('a', '/x', s.fetch), { text: '[3]', outcome: 'hit' }, "another space's change leaves it");
});

t.test('an answer a change overtook on its way is not kept', async (t) => {
  const bus = new MemoryBus();
  const versions = bus.spaceVersions();
  const cache = new ReadCache(versions, settings);
  // The service read the old state; the write landed and was bumped before the answer arrived.
  t.match(
    await cache.read('a', '/x', async () => {
      await versions.bump('a');
      return '[old]';
    }),
    { text: '[old]', outcome: 'miss' },
  );
  t.match(await cache.read('a', '/x', async () => '[new]'), { text: '[new]', outcome: 'miss' }, 'not served from the cache');
  await cache.read('a', '/y', async () => {
    cache.written('a');
    return '[old]';
  });
  t.match(await cache.read('a', '/y', async () => '[new]'), { text: '[new]' }, 'nor when a local write overtook it');
});

t.test('identical reads while one is on its way share its fetch; not across a change', async (t) => {
  const bus = new MemoryBus();
  const versions = bus.spaceVersions();
  const cache = new ReadCache(versions, settings);
  let release!: () => void;
  let calls = 0;
  const slow = () => {
    calls++;
    return new Promise<string>((resolve) => {
      release = () => resolve(`[${calls}]`);
    });
  };
  const first = cache.read('a', '/x', slow);
  const second = cache.read('a', '/x', slow);
  release();
  t.match(await first, { text: '[1]', outcome: 'miss' });
  t.match(await second, { text: '[1]', outcome: 'shared' });
  t.equal(calls, 1, 'one fetch');
  await versions.bump('a');
  const before = cache.read('a', '/y', slow);
  const releaseBefore = release;
  await versions.bump('a');
  const after = cache.read('a', '/y', slow);
  releaseBefore();
  release();
  t.match(await before, { outcome: 'miss' });
  t.match(await after, { outcome: 'miss' }, 'a read after a change sends its own');
  t.equal(calls, 3);
  const failing = cache.read('a', '/z', () => Promise.reject(new Error('down')));
  const joined = cache.read('a', '/z', slow);
  await t.rejects(failing, /down/);
  await t.rejects(joined, /down/, 'a shared failure fails both');
  t.match(await cache.read('a', '/z', async () => '[ok]'), { text: '[ok]', outcome: 'miss' }, 'and is not kept');
});

t.test('nothing older than the age bound', async (t) => {
  const cache = new ReadCache(new MemoryBus().spaceVersions(), { ...settings, maxAgeMs: 40 });
  const s = source(() => '[]');
  await cache.read('a', '/x', s.fetch);
  t.match(await cache.read('a', '/x', s.fetch), { outcome: 'hit' });
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.match(await cache.read('a', '/x', s.fetch), { outcome: 'miss' }, 'expired');
});

t.test('the size bound: keys counted, least recently used first, one space at most a quarter', async (t) => {
  const cache = new ReadCache(new MemoryBus().spaceVersions(), { maxAgeMs: 1000, maxChars: 8000 });
  const hundred = async () => 'x'.repeat(100);
  for (let i = 0; i < 5; i++) await cache.read('b', `/b${i}`, hundred);
  for (let i = 0; i < 5; i++) await cache.read('a', `/${i}`, hundred);
  await cache.read('a', '/0', hundred);
  for (let i = 5; i < 40; i++) await cache.read('a', `/${i}`, hundred);
  t.ok(cache.size.chars <= 8000, `${cache.size.chars} characters kept`);
  t.match(await cache.read('a', '/39', hundred), { outcome: 'hit' }, 'the newest stays');
  t.match(await cache.read('a', '/1', hundred), { outcome: 'miss' }, 'the least recently used went');
  for (let i = 0; i < 5; i++) t.match(await cache.read('b', `/b${i}`, hundred), { outcome: 'hit' }, `another space kept its answer ${i}`);
  const long = '/'.repeat(5000);
  await cache.read('a', long, hundred);
  t.match(await cache.read('a', long, hundred), { outcome: 'off' }, 'a key past the longest is never kept');
  await cache.read('a', '/big', async () => 'x'.repeat(1000));
  t.match(
    await cache.read('a', '/big', async () => 'x'.repeat(1000)),
    { outcome: 'miss' },
    'an answer over an eighth of the cache is not kept',
  );
});

t.test('a key is counted: many spellings of nothing cannot grow the cache past its bound', async (t) => {
  const cache = new ReadCache(new MemoryBus().spaceVersions(), { maxAgeMs: 1000, maxChars: 100_000 });
  for (let i = 0; i < 2000; i++) await cache.read('a', `/${'&'.repeat(1000)}${i}`, async () => '[]');
  t.ok(cache.size.chars <= 100_000 / 4, `${cache.size.entries} entries, ${cache.size.chars} characters: within the space's share`);
});

t.test('If-None-Match', async (t) => {
  t.ok(noneMatch('"abc"', '"abc"'));
  t.ok(noneMatch('"x", W/"abc"', '"abc"'), 'weak comparison, in a list');
  t.ok(noneMatch('*', '"abc"'));
  t.notOk(noneMatch('"abd"', '"abc"'));
  t.notOk(noneMatch(undefined, '"abc"'));
  t.notOk(noneMatch('', '"abc"'));
});
