/**
 * Every event of the registry, published from its own example, is taken by its publisher's check and by
 * every follower's decoding: the services that follow it on the bus (the config replicas following a
 * script's events, the protocol replicas following alarm definitions, the gateways following auth
 * events) and the live channel. A follower that refuses a body logs "an event not of its defined shape";
 * none may.
 */
import {
  configEvents,
  decodeEvent,
  encodeEvent,
  encodeOwnEvent,
  events,
  listedItems,
  type EventBody,
  type EventDefinition,
} from '@scada/contracts';
import { publishEvent, type KindOf } from '@scada/platform';
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { asAdmin } from '@scada/testkit/session';
import { isEvent, openSse } from '@scada/testkit/sse';

/** Each subject of an event with its kind (undefined for an event of one subject). */
const kindsOf = (e: EventDefinition): (string | undefined)[] => (e.kinds.length === 0 ? [undefined] : [...e.kinds]);

t.test('every event of the registry has an example its schema takes, unchanged by the way through the bus', async (t) => {
  for (const e of events) {
    t.ok(e.example, `${e.name} has an example`);
    const data = encodeEvent(e, e.example as EventBody<typeof e>);
    t.same(decodeEvent(e, data), e.example, `${e.name}: the follower reads what the publisher sent`);
  }
});

t.test("a service's own encoding (not checked on the way out) makes the checked encoding's JSON, each listed item findable", async (t) => {
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  for (const e of events) {
    const body = e.example as EventBody<typeof e>;
    t.equal(text(encodeOwnEvent(e, body)), text(encodeEvent(e, body)), `${e.name}: the same JSON`);
  }
  const report = events.find((e) => e.name === 'protocol.report')!;
  const example = report.example as { values: { reference: string }[] };
  const body = { ...example, values: [example.values[0]!, { ...example.values[0]!, reference: 'LD\u00e9/GGIO1.Ind1.stVal' }] };
  const data = encodeOwnEvent(report, body as EventBody<typeof report>, 'values');
  t.equal(text(data), text(encodeEvent(report, body as EventBody<typeof report>)), 'a report encoded value by value: the same JSON');
  t.same(
    listedItems(data)?.map(text),
    body.values.map((v) => JSON.stringify(v)),
    "each value's bytes in the event are its JSON, non-ASCII text included",
  );
  t.same(JSON.parse(text(data)), decodeEvent(report, data), 'its followers in the process read what its JSON says');
  t.equal(listedItems(encodeEvent(report, body as EventBody<typeof report>)), undefined, 'a checked encoding lists no items');
});

t.test("a body its schema takes only before JSON (a required value left undefined) is the publisher's error", async (t) => {
  const report = events.find((e) => e.name === 'protocol.report')!;
  const example = report.example as { values: { value: unknown }[] };
  const body = { ...example, values: [{ ...example.values[0], value: undefined }] };
  t.throws(() => encodeEvent(report, body), { name: 'EventShapeError' });
});

const p = await startTestPlatform();
t.teardown(() => p.stop());

t.test(`every example published on the bus reaches every follower without a refusal (${p.mode})`, async (t) => {
  const admin = await asAdmin(p);
  const live = await openSse(`${p.url}/api/live?topics=values,sessions,config,scripts,alarms`, admin.headers);
  t.teardown(() => live.close());
  await live.wait(isEvent('snapshot'));
  const before = p.logs.length;

  for (const e of events) {
    for (const kind of kindsOf(e)) {
      publishEvent(p.proc.bus, e, e.example as EventBody<typeof e>, { kind: kind as KindOf<typeof e>, requestId: `example-${e.name}` });
    }
  }
  // The last one published; the live channel carries events in the order they were published.
  publishEvent(p.proc.bus, configEvents.scriptRan, { ...configEvents.scriptRan.example, id: 'last' }, { requestId: 'example-last' });
  await live.wait(isEvent('script', (d) => d.scriptId === 'last'));

  const seen = (name: string) => live.events.filter(isEvent(name)).length;
  t.equal(seen('value'), 1, 'the report: its one value');
  t.equal(seen('session'), 1, 'the session change');
  t.equal(seen('alarm'), 1, "the alarm's transition");
  t.equal(seen('script'), 2, "the script's run, and the last");
  // Every created, updated and deleted of configuration, connections included; a script's (un)scheduling is not on the channel.
  const changes = events
    .filter((e) => e.publisher !== 'auth')
    .flatMap((e) => e.kinds.filter((k) => k === 'created' || k === 'updated' || k === 'deleted'));
  t.equal(seen('config'), changes.length, 'every configuration change');

  const refused = p.logs.slice(before).filter((l) => /not of its defined shape/.test(String(l.msg)));
  t.same(refused, [], 'no follower refused an event');
});
