/**
 * Events are defined once, in the registry beside the operations: each with a subject of its own under
 * `events.<publisher>.`, a schema that its publisher's bodies and its followers' decoding are held to,
 * and no subject written by hand in any source outside `contracts/`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { decodeEvent, encodeEvent, EventShapeError, eventOf, events, kindOf, protocolEvents, authEvents } from '@scada/contracts';
import t from 'tap';

const root = new URL('..', import.meta.url).pathname;

t.test('every event has its own subjects under its publisher, and the registry finds each subject', async (t) => {
  const seen = new Set<string>();
  for (const e of events) {
    t.ok(e.name.startsWith(`${e.publisher}.`), `${e.name} is under its publisher`);
    const subjects = e.kinds.length === 0 ? [e.subject()] : e.kinds.map((k) => e.subject(k));
    for (const s of subjects) {
      t.notOk(seen.has(s), `${s} belongs to one event`);
      seen.add(s);
      t.equal(eventOf(s), e, `${s} → ${e.name}`);
      t.not(kindOf(e, s), null);
    }
    t.ok(e.summary.length > 10, `${e.name} says what it is`);
  }
  t.equal(eventOf('events.protocol.nothing'), undefined);
  t.throws(() => authEvents.user.subject('renamed' as 'created'), /no kind/);
});

t.test('a body is checked both ways: a publisher cannot send a wrong shape, a follower skips one', async (t) => {
  const good = {
    space: 's',
    connectionId: 'c',
    state: 'connected' as const,
    since: new Date().toISOString(),
    lastError: null,
    warnings: [],
  };
  const data = encodeEvent(protocolEvents.session, good);
  t.match(decodeEvent(protocolEvents.session, data), { ...good, at: String });
  t.throws(() => encodeEvent(protocolEvents.session, { ...good, state: 'sleeping' as 'connected' }), EventShapeError);
  t.equal(decodeEvent(protocolEvents.session, new TextEncoder().encode('{"space":"s"}')), null);
  t.equal(decodeEvent(protocolEvents.session, new TextEncoder().encode('not json')), null);
});

/** The `.ts` sources of the platform: every workspace's `src/`, the deploy and build tools, the entry points. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name === 'node_modules' || name === 'dist' || name === 'data' || name === 'test' || name.startsWith('.')) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

t.test('no source outside contracts/ writes an event subject by hand', async (t) => {
  const found: string[] = [];
  for (const file of sources(root)) {
    if (file.startsWith(join(root, 'contracts/')) || file.startsWith(join(root, 'bench/'))) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const code = line.trimStart();
        if (code.startsWith('*') || code.startsWith('//') || code.startsWith('/*')) return;
        if (/['"`]events\./.test(code)) found.push(`${file.slice(root.length)}:${i + 1}`);
      });
  }
  t.same(found, []);
});
