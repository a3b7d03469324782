/** The sign-in rate limiter on an injected clock: bursts, refill, per-address buckets and the bound on addresses. */
import t from 'tap';
import { Cooldown, RateLimiter } from '../src/auth/rate_limit.ts';

const start = 1_700_000_000_000;

t.test('a full bucket takes a burst of perMinute, then answers the seconds to wait', async (t) => {
  const limiter = new RateLimiter(6);
  for (let i = 0; i < 6; i++) t.equal(limiter.take('192.0.2.1', start), 0);
  t.equal(limiter.take('192.0.2.1', start), 10, 'one token comes back every 10 s at 6 a minute');
  t.equal(limiter.take('192.0.2.1', start + 4_000), 6, 'a refused request takes nothing; the wait shrinks with time');
});

t.test('tokens come back with time, never more than perMinute', async (t) => {
  const limiter = new RateLimiter(60);
  for (let i = 0; i < 60; i++) limiter.take('192.0.2.2', start);
  t.equal(limiter.take('192.0.2.2', start + 999), 1, 'not quite one token back after 999 ms');
  t.equal(limiter.take('192.0.2.2', start + 1_000), 0, 'one token back after a second');
  const later = start + 3_600_000;
  let allowed = 0;
  while (limiter.take('192.0.2.2', later) === 0) allowed++;
  t.equal(allowed, 60, 'an hour later, a burst of perMinute and not more');
});

t.test('each address has its own bucket', async (t) => {
  const limiter = new RateLimiter(1);
  t.equal(limiter.take('192.0.2.3', start), 0);
  t.ok(limiter.take('192.0.2.3', start) > 0);
  t.equal(limiter.take('2001:db8::3', start), 0, 'another address is not slowed');
});

t.test('past maxAddresses the least recently seen address is forgotten', async (t) => {
  const limiter = new RateLimiter(1, 2);
  limiter.take('a', start);
  limiter.take('b', start);
  limiter.take('a', start + 1); // a is now the most recently seen
  limiter.take('c', start + 2); // forgets b
  t.ok(limiter.take('c', start + 3) > 0, 'c, seen last, keeps its empty bucket');
  t.equal(limiter.take('b', start + 4), 0, 'b was forgotten: a full bucket again');
});

t.test('a cooldown holds an address for its Retry-After, then forgets it', async (t) => {
  const cooldown = new Cooldown();
  t.equal(cooldown.remainingMs('192.0.2.5', start), 0, 'an address never held may be served');
  cooldown.hold('192.0.2.5', 2, start);
  t.equal(cooldown.remainingMs('192.0.2.5', start), 2_000);
  t.equal(cooldown.remainingMs('192.0.2.5', start + 1_500), 500);
  t.equal(cooldown.remainingMs('192.0.2.5', start + 2_000), 0, 'served again when the time is up');
  t.equal(cooldown.remainingMs('2001:db8::5', start), 0, 'another address is not held');
});

t.test('a shorter hold does not cut a longer one short; the oldest address goes past the bound', async (t) => {
  const cooldown = new Cooldown(2);
  cooldown.hold('a', 5, start);
  cooldown.hold('a', 1, start);
  t.equal(cooldown.remainingMs('a', start + 3_000), 2_000, 'the five-second hold stands');
  cooldown.hold('b', 5, start);
  cooldown.hold('c', 5, start);
  t.equal(cooldown.remainingMs('a', start), 0, 'a, held first, was forgotten');
  t.equal(cooldown.remainingMs('c', start), 5_000);
});
