/**
 * Versions of spaces (`Bus.spaceVersions`), on both buses: a bump gives the space a stamp no process gave
 * before and leaves other spaces alone, a second process following the versions hears it, nothing can
 * be read from a process that does not follow or lost its bus, and `serve` bumps the space of every
 * write operation of the registry, refused ones too, before it answers.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { operations, ProblemError } from '@scada/contracts';
import { pino } from 'pino';
import t from 'tap';
import { busTargets, uniqueToken } from '@scada/testkit/buses';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { NatsBus } from '../src/bus/nats_bus.ts';
import { spaceVersionsBucket } from '../src/bus/nats_space_versions.ts';
import { PrefixedBus } from '../src/bus/prefixed_bus.ts';
import type { SpaceStamp, SpaceVersions } from '../src/bus/space_versions.ts';
import { changesSpace, implement, relay, serve } from '../src/rpc.ts';
import { waitFor } from './bus_helpers.ts';
import { freePort, hasServer, startServer, stopServer, within } from './nats_servers.ts';
import { harnessNatsOptions } from '@scada/testkit/nats_auth';

const quiet = pino({ level: 'silent' });

/** Waits until `versions` gives `space` a stamp other than `before`; the new stamp. */
async function changed(versions: SpaceVersions, space: string, before: SpaceStamp | undefined): Promise<SpaceStamp> {
  await waitFor(() => {
    const now = versions.stampOf(space);
    return now !== undefined && now !== before;
  }, 5000);
  return versions.stampOf(space) as SpaceStamp;
}

for (const target of busTargets()) {
  t.test(`space versions (${target.name} bus)`, async (t) => {
    // On NATS two connections under one prefix, as two processes would have; the in-process bus is shared by its process.
    const prefix = uniqueToken('versions');
    const writerBus = new PrefixedBus(await target.makeRaw(), prefix);
    t.teardown(() => writerBus.close());
    const readerBus = target.name === 'nats' ? new PrefixedBus(await target.makeRaw(), prefix) : writerBus;
    if (readerBus !== writerBus) t.teardown(() => readerBus.close());
    const reader = readerBus.spaceVersions();

    if (target.name === 'nats') t.equal(reader.stampOf('plant'), undefined, 'nothing is known before following');
    await reader.follow();
    const plant = reader.stampOf('plant');
    const other = reader.stampOf('other');
    t.not(plant, undefined, 'following: a stamp');

    await writerBus.spaceVersions().bump('plant');
    const after = await changed(reader, 'plant', plant);
    t.equal(reader.stampOf('other'), other, 'another space keeps its stamp');

    const seen = new Set<SpaceStamp>([plant as SpaceStamp, after]);
    for (let i = 0; i < 5; i++) {
      const before = reader.stampOf('plant');
      await writerBus.spaceVersions().bump('plant');
      const now = await changed(reader, 'plant', before);
      t.notOk(seen.has(now), `bump ${i + 1}: a stamp never given before`);
      seen.add(now);
    }
    const odd = 'Ünïcode space/with.dots and spaces';
    const oddBefore = reader.stampOf(odd);
    await writerBus.spaceVersions().bump(odd);
    await changed(reader, odd, oddBefore);
    t.pass('any space name travels');

    t.equal(readerBus.spaceVersions(), reader, 'one object per bus and prefix');
    if (target.name === 'nats') {
      // A burst of writes to one space: grouped into few puts, every bump answered, the change heard.
      const nc = await connect(harnessNatsOptions());
      t.teardown(() => nc.close());
      const stream = `KV_${spaceVersionsBucket(prefix)}`;
      const jsm = await jetstreamManager(nc);
      const puts = async () => (await jsm.streams.info(stream)).state.last_seq;
      const before = await puts();
      const stamp = reader.stampOf('burst');
      await Promise.all(Array.from({ length: 50 }, () => writerBus.spaceVersions().bump('burst')));
      const sent = (await puts()) - before;
      t.ok(sent >= 1 && sent < 50, `50 bumps, ${sent} puts`);
      await changed(reader, 'burst', stamp);
      // A bump after the burst is its own put, sent after it was asked for.
      const last = reader.stampOf('burst');
      await writerBus.spaceVersions().bump('burst');
      t.equal((await puts()) - before, sent + 1, 'the next bump is one more put');
      await changed(reader, 'burst', last);
      // Writes that committed in one turn of the event loop share one put, sent with the turn's write.
      const turnBefore = await puts();
      const turnStamp = reader.stampOf('turn');
      await Promise.all([1, 2, 3].map(() => writerBus.spaceVersions().bump('turn')));
      t.equal((await puts()) - turnBefore, 1, 'three bumps asked in one turn are one put');
      await changed(reader, 'turn', turnStamp);
    }
    if (target.name === 'nats') {
      t.not(new PrefixedBus(readerBus, 'x').spaceVersions(), reader, 'another prefix, other versions');
      await reader.close();
      t.equal(reader.stampOf('plant'), undefined, 'closed: nothing known');
    }
  });

  t.test(`serve bumps the space of every write operation before answering (${target.name} bus)`, async (t) => {
    const bus = await target.make();
    t.teardown(() => bus.close());
    const versions = bus.spaceVersions();
    await versions.follow();
    const writes = operations.filter(changesSpace);
    const reads = operations.filter((op) => op.http?.method === 'GET');
    t.ok(writes.length > 40, `${writes.length} write operations`);
    // Refused by the handler: a write that fails bumps too, as one failing late may have changed something.
    const refuse = async () => {
      throw new ProblemError('not_found', 'nothing here');
    };
    const service = await serve(
      bus,
      { name: uniqueToken('versions'), version: '0.0.0', instance: 'x' },
      [...writes, ...reads].map((op) => implement(op, refuse)),
      quiet,
    );
    t.teardown(() => service.stop());
    const missed: string[] = [];
    for (const op of writes) {
      const before = versions.stampOf('plant');
      await relay(bus, op, { params: {}, query: {} } as never, { requestId: 'r', space: 'plant' }).catch(() => {});
      // On the in-process bus the bump has happened when the answer arrives; on NATS it is stored by then
      // and heard a moment later.
      const bumped =
        target.name === 'memory'
          ? versions.stampOf('plant') !== before
          : await changed(versions, 'plant', before).then(
              () => true,
              () => false,
            );
      if (!bumped) missed.push(op.operationId);
    }
    t.same(missed, [], 'every write bumped its space');
    const keeping = operations.filter((op) => op.http !== undefined && op.http.method !== 'GET' && !changesSpace(op));
    t.ok(keeping.length >= 10, `${keeping.length} device and session operations keep the configuration`);
    const keeper = await serve(
      bus,
      { name: uniqueToken('versions'), version: '0.0.0', instance: 'y' },
      keeping.map((op) => implement(op, refuse)),
      quiet,
    );
    t.teardown(() => keeper.stop());
    const beforeKeeping = versions.stampOf('plant');
    for (const op of keeping) await relay(bus, op, { params: {}, query: {} } as never, { requestId: 'r', space: 'plant' }).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, target.name === 'memory' ? 0 : 200));
    t.equal(versions.stampOf('plant'), beforeKeeping, 'a device read, write or control, a start or a stop bumps nothing');
    const before = versions.stampOf('plant');
    for (const op of reads) await relay(bus, op, { params: {}, query: {} } as never, { requestId: 'r', space: 'plant' }).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, target.name === 'memory' ? 0 : 200));
    t.equal(versions.stampOf('plant'), before, 'reads bump nothing');
    const without = versions.stampOf('plant');
    await relay(bus, writes[0]!, { params: {}, query: {} } as never, { requestId: 'r' }).catch(() => {});
    t.equal(versions.stampOf('plant'), without, 'a request without a space bumps nothing');
  });
}

t.test(
  'a follower that loses its NATS server knows nothing until it is back',
  { skip: hasServer ? false : 'nats-server is not on the PATH' },
  async (t) => {
    const port = await freePort();
    const store = await mkdtemp(join(tmpdir(), 'versions-js-'));
    t.teardown(() => rm(store, { recursive: true, force: true }));
    const jetstream = `jetstream { store_dir: "${store}" }`;
    let server = await startServer(port, jetstream);
    const url = `nats://127.0.0.1:${port}`;
    const bus = await within(10_000, NatsBus.connect({ servers: url, name: 'versions-test', defaultTimeoutMs: 2000 }));
    t.teardown(async () => {
      await within(5000, bus.close()).catch(() => {});
      await server.dispose();
    });
    const versions = bus.spaceVersions();
    await within(10_000, versions.follow());
    const first = versions.stampOf('plant');
    t.not(first, undefined);

    await stopServer(server.server);
    await waitFor(() => versions.stampOf('plant') === undefined, 5000);
    t.pass('disconnected: no stamp, so no cached answer may be trusted');

    server = await startServer(port, jetstream);
    await waitFor(() => versions.stampOf('plant') !== undefined, 10_000);
    t.not(versions.stampOf('plant'), first, 'back: every space has a new stamp (changes may have been missed)');
    const back = versions.stampOf('plant');
    await within(5000, versions.bump('plant'));
    await changed(versions, 'plant', back);
    t.pass('bumps are heard again');
  },
);

t.test(
  'on a NATS server without JetStream: following gives up for now, nothing is trusted, a bump has nobody to tell',
  { skip: hasServer ? false : 'nats-server is not on the PATH' },
  async (t) => {
    const port = await freePort();
    const server = await startServer(port);
    const bus = await within(
      10_000,
      NatsBus.connect({ servers: `nats://127.0.0.1:${port}`, name: 'versions-test', defaultTimeoutMs: 2000 }),
    );
    t.teardown(async () => {
      await within(5000, bus.close()).catch(() => {});
      await server.dispose();
    });
    const versions = bus.spaceVersions();
    await within(10_000, versions.follow());
    t.equal(versions.stampOf('plant'), undefined, 'no versions: a gateway answers every read from its service');
    // No stream can take the put, so no gateway can follow it either: the write has nothing to tell.
    await t.resolves(within(5000, versions.bump('plant')), 'a bump answers without a bucket to put to');
  },
);

t.test(
  'with JetStream but no gateway that follows (no bucket yet): bumps answer quietly, and are heard once one follows',
  { skip: hasServer ? false : 'nats-server is not on the PATH' },
  async (t) => {
    const port = await freePort();
    const store = await mkdtemp(join(tmpdir(), 'versions-js-'));
    t.teardown(() => rm(store, { recursive: true, force: true }));
    const server = await startServer(port, `jetstream { store_dir: "${store}" }`);
    const url = `nats://127.0.0.1:${port}`;
    const writer = await within(10_000, NatsBus.connect({ servers: url, name: 'versions-writer', defaultTimeoutMs: 2000 }));
    const reader = await within(10_000, NatsBus.connect({ servers: url, name: 'versions-reader', defaultTimeoutMs: 2000 }));
    t.teardown(async () => {
      await within(5000, writer.close()).catch(() => {});
      await within(5000, reader.close()).catch(() => {});
      await server.dispose();
    });
    const writes = writer.spaceVersions();
    for (let i = 0; i < 3; i++) await t.resolves(within(5000, writes.bump('plant')), `bump ${i + 1} without a bucket`);
    const follower = reader.spaceVersions();
    await within(10_000, follower.follow());
    const before = follower.stampOf('plant');
    t.not(before, undefined, 'a follower made the bucket');
    await within(5000, writes.bump('plant'));
    t.not(await changed(follower, 'plant', before), before, 'the next bump is heard');
  },
);

t.test(
  'a put the bucket refuses fails the bump (the write it stands for is answered without it)',
  { skip: busTargets().some((b) => b.name === 'nats') ? false : 'needs NATS_URL' },
  async (t) => {
    const target = busTargets().find((b) => b.name === 'nats')!;
    const prefix = uniqueToken('refused');
    const bus = new PrefixedBus(await target.makeRaw(), prefix);
    t.teardown(() => bus.close());
    const nc = await connect(harnessNatsOptions());
    const jsm = await jetstreamManager(nc);
    const stream = `KV_${spaceVersionsBucket(prefix)}`;
    t.teardown(async () => {
      await jsm.streams.delete(stream).catch(() => {});
      await nc.close();
    });
    // The bucket's stream, sealed: JetStream answers every put with an error in its acknowledgement.
    await jsm.streams.add({ name: stream, subjects: [`$KV.${spaceVersionsBucket(prefix)}.>`], allow_direct: true });
    // `sealed` is a stream setting the client's update type leaves out.
    await jsm.streams.update(stream, { sealed: true } as Parameters<typeof jsm.streams.update>[1]);
    await t.rejects(bus.spaceVersions().bump('plant'), 'the put is refused: the bump fails');
    t.equal((await jsm.streams.info(stream)).state.messages, 0, 'nothing was stored');
    // A stream that takes the put: the same bump succeeds.
    await jsm.streams.delete(stream);
    await jsm.streams.add({ name: stream, subjects: [`$KV.${spaceVersionsBucket(prefix)}.>`], allow_direct: true });
    await t.resolves(bus.spaceVersions().bump('plant'), 'once the bucket takes puts, a bump is one');
    t.equal((await jsm.streams.info(stream)).state.messages, 1, 'one put stored');
  },
);
