/** The password-check queue of one auth replica, on an injected clock: turns, priority, refusals and the wait it foresees. */
import { ProblemError } from '@scada/contracts';
import t from 'tap';
import { CheckQueue } from '../src/domain/check_queue.ts';

const clock = () => {
  let now = 1_700_000_000_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
};
const settled = () => new Promise((r) => setImmediate(r));
const codeOf = (err: unknown) => (err instanceof ProblemError ? err.code : String(err));

t.test('one lane: the first check runs at once, the next when it is done', async (t) => {
  const c = clock();
  const queue = new CheckQueue({ concurrency: 1, queueLength: 4, estimateMs: 100, now: c.now });
  const first = queue.admit('192.0.2.1', Infinity);
  await first.turn();
  const second = queue.admit('192.0.2.2', Infinity);
  let started = false;
  void second.turn().then(() => (started = true));
  await settled();
  t.same(queue.load, { running: 1, waiting: 1 });
  t.notOk(started, 'the second waits for the lane');
  first.done();
  await settled();
  t.ok(started, 'and gets it when the first is done');
  second.done();
  t.same(queue.load, { running: 0, waiting: 0 });
});

t.test('a clean address is served before a failing one, whatever the order of arrival', async (t) => {
  const c = clock();
  const queue = new CheckQueue({ concurrency: 1, queueLength: 4, estimateMs: 100, now: c.now });
  queue.noteFailure('192.0.2.66', 3);
  const running = queue.admit('192.0.2.1', Infinity);
  await running.turn();
  const order: string[] = [];
  const failing = queue.admit('192.0.2.66', Infinity);
  const clean = queue.admit('192.0.2.7', Infinity);
  void failing.turn().then(() => order.push('failing'));
  void clean.turn().then(() => order.push('clean'));
  running.done();
  await settled();
  t.same(order, ['clean']);
  clean.done();
  await settled();
  t.same(order, ['clean', 'failing']);
  failing.done();
});

t.test('a full queue refuses at once with overloaded and Retry-After, or makes room for a cleaner address', async (t) => {
  const c = clock();
  const queue = new CheckQueue({ concurrency: 1, queueLength: 2, estimateMs: 100, retryAfterSeconds: 2, now: c.now });
  queue.noteFailure('192.0.2.66', 5);
  const running = queue.admit('192.0.2.66', Infinity);
  const a = queue.admit('192.0.2.66', Infinity);
  const b = queue.admit('192.0.2.66', Infinity);
  const refused = t.throws(() => queue.admit('192.0.2.66', Infinity)) as unknown as ProblemError;
  t.equal(refused.code, 'overloaded');
  t.equal(refused.retryAfter, 2);
  // A newcomer from a clean address pushes out the last-placed check of the failing one.
  const clean = queue.admit('192.0.2.9', Infinity);
  t.equal(await b.turn().then(() => 'turn', codeOf), 'overloaded', 'the last-placed waiting check of the failing address was pushed out');
  t.same(queue.load, { running: 1, waiting: 2 });
  for (const ticket of [running, a, b, clean]) ticket.done();
});

t.test('the wait it foresees counts what the running check has left, and refuses at once what could not finish in time', async (t) => {
  const c = clock();
  const queue = new CheckQueue({ concurrency: 1, queueLength: 4, estimateMs: 1000, now: c.now });
  const running = queue.admit('192.0.2.1', Infinity);
  await running.turn();
  c.advance(600);
  // 400 ms left of the running check, then 1000 ms of its own, with a quarter's room: 1750 ms.
  const admitted = queue.admit('192.0.2.2', c.now() + 1_800);
  t.same(queue.load, { running: 1, waiting: 1 }, 'a check that can finish before its deadline waits for its turn');
  const late = t.throws(() => queue.admit('192.0.2.3', c.now() + 1_800)) as unknown as ProblemError;
  t.equal(late.code, 'overloaded', 'one more behind it could not: refused at once, never left to time out');
  running.done();
  admitted.done();
});

t.test('a waiting check is answered overloaded while its caller still listens, not left to pass its deadline', async (t) => {
  const queue = new CheckQueue({ concurrency: 1, queueLength: 4, estimateMs: 10 });
  const running = queue.admit('192.0.2.1', Infinity);
  await running.turn();
  const waiting = queue.admit('192.0.2.2', Date.now() + 60);
  // The queue's own timer does not hold the process open; this test does, meanwhile.
  const keepAlive = setTimeout(() => undefined, 5_000);
  t.teardown(() => clearTimeout(keepAlive));
  const outcome = await waiting.turn().then(
    () => 'turn',
    (err: unknown) => codeOf(err),
  );
  t.equal(outcome, 'overloaded');
  t.same(queue.load, { running: 1, waiting: 0 });
  waiting.done();
  running.done();
});

t.test('a caller that gave up leaves the queue without running; done() twice counts once', async (t) => {
  const queue = new CheckQueue({ concurrency: 1, queueLength: 4, estimateMs: 10 });
  const running = queue.admit('192.0.2.1', Infinity);
  const gaveUp = queue.admit('192.0.2.2', Infinity);
  gaveUp.done();
  t.same(queue.load, { running: 1, waiting: 0 });
  running.done();
  running.done();
  t.same(queue.load, { running: 0, waiting: 0 });
  const next = queue.admit('192.0.2.3', Infinity);
  t.same(queue.load, { running: 1, waiting: 0 }, 'the lane is free again, once');
  next.done();
});

t.test('a check is placed by its address standing at each turn: refused since, it waits behind a newer clean one', async (t) => {
  const c = clock();
  const queue = new CheckQueue({ concurrency: 1, queueLength: 1, estimateMs: 100, now: c.now });
  const running = queue.admit('192.0.2.1', Infinity);
  // Both addresses are clean when the storm's check is queued …
  const storm = queue.admit('192.0.2.66', Infinity);
  // … then the storm address is refused for a full queue, over and over.
  for (let i = 0; i < 4; i++) t.throws(() => queue.admit('192.0.2.66', Infinity));
  const clean = queue.admit('192.0.2.9', Infinity);
  t.equal(await storm.turn().then(() => 'turn', codeOf), 'overloaded', 'the storm check, now worst placed, made room');
  let cleanStarted = false;
  void clean.turn().then(() => (cleanStarted = true));
  running.done();
  await settled();
  t.ok(cleanStarted, 'the clean check runs next');
  clean.done();
});

t.test('an estimate from elsewhere is taken only while nothing is known', async (t) => {
  const c = clock();
  const queue = new CheckQueue({ concurrency: 1, queueLength: 4, now: c.now });
  const first = queue.admit('192.0.2.1', Infinity);
  t.doesNotThrow(() => queue.admit('192.0.2.2', c.now() + 100).done(), 'with nothing known, nothing is refused for time');
  queue.estimate(1_000);
  t.throws(() => queue.admit('192.0.2.3', c.now() + 1_500), 'at a second a check, a wait behind one cannot finish in 1.5 s');
  queue.estimate(10);
  t.throws(() => queue.admit('192.0.2.4', c.now() + 1_500), 'a later estimate does not replace what is known');
  first.done();
});
