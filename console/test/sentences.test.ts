/**
 * The sentences the console shows for the platform's problems fit what was asked: a sign-in that times
 * out is the sign-in service's, a read that times out is the device's, and a conflict says what is in
 * the way.
 */
import t from 'tap';
import { sentenceFor } from '../src/api.ts';

const timeout = { code: 'upstream_timeout' };
const asked = (method: string, path: string) => ({ method, path });

t.test('a sign-in that times out says the sign-in service did not answer, not the device', async (t) => {
  for (const path of ['/login', '/validate', '/refresh', '/api/auth/current-user', '/api/users/profile', '/api/users/reset-password']) {
    const sentence = sentenceFor(504, timeout, null, asked('POST', path));
    t.match(sentence, /^The sign-in service did not answer in time\./, path);
    t.notMatch(sentence, /device/i, path);
  }
});

t.test("a device operation that times out is the device's", async (t) => {
  for (const op of ['read', 'write', 'control', 'reports', 'browse', 'setting-groups/active']) {
    t.match(sentenceFor(504, timeout, null, asked('POST', `/api/connections/abc/${op}`)), /^The device did not answer in time\./, op);
  }
});

t.test('other operations name the service that owns them, never the device', async (t) => {
  const cases: [string, RegExp][] = [
    ['/api/users', /^The user service did not answer in time\. Try again in a moment\.$/],
    ['/api/spaces', /^The user service/],
    ['/api/scripts/abc/run', /^The configuration service/],
    ['/api/projects', /^The configuration service/],
    ['/api/connections', /^The connection service/],
    ['/api/sites', /^The connection service/],
    ['/api/connections/abc/history', /^The history service/],
  ];
  for (const [path, sentence] of cases) t.match(sentenceFor(504, timeout, null, asked('GET', path)), sentence, path);
});

t.test('a service that is not there or busy is named with the wait it asks for', async (t) => {
  t.equal(
    sentenceFor(503, { code: 'service_unavailable' }, '5', asked('POST', '/login')),
    'The sign-in service is not running or is starting. Try again in 5 seconds.',
  );
  t.equal(
    sentenceFor(503, { code: 'overloaded', retryAfter: 2 }, null, asked('POST', '/api/connections/abc/read')),
    'The platform is busy with other requests. Try again in 2 seconds.',
  );
  t.equal(
    sentenceFor(502, { code: 'bad_gateway' }, null, asked('POST', '/api/connections/abc/read')),
    'The device answered something the platform could not understand.',
  );
  t.equal(
    sentenceFor(502, { code: 'bad_gateway' }, null, asked('GET', '/api/users')),
    'The user service answered something the platform could not understand.',
  );
  t.match(
    sentenceFor(503, { code: 'site_unreachable' }, '3', asked('POST', '/api/connections/abc/write')),
    /site .* Try again in 3 seconds\./,
  );
});

t.test("a conflict says what is in the way, in the service's words", async (t) => {
  t.equal(
    sentenceFor(409, { code: 'conflict', detail: 'The last enabled administrator must stay' }, null, asked('DELETE', '/api/users/x')),
    'The last enabled administrator must stay.',
  );
  t.equal(sentenceFor(409, { code: 'conflict' }, null, asked('POST', '/api/spaces')), 'That name is already taken; choose another.');
});
