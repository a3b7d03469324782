/**
 * A device that accepts MMS PDUs larger than a bus message: the association takes the largest PDU the
 * client proposes, a FileRead brings a piece of about 1 MiB, and the pieces reach the client byte for byte
 * in chunks that each fit one bus message.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startSimulator } from '@scada/simulator';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection, until } from '@scada/testkit/live';

const dat = randomBytes(2_500_000);
const sim = await startSimulator({
  model: await fixtureModel(),
  port: 0,
  maxPduSize: 4 * 1024 * 1024,
  files: { 'COMTRADE/DR_0001.DAT': { data: dat } },
});
t.teardown(() => sim.stop());
const p = await startTestPlatform();
t.teardown(() => p.stop());

t.test(`pieces larger than a bus message reach the client byte for byte (${p.mode})`, async (t) => {
  const c = await liveConnection(p, sim.port);
  await c.connect();
  const fileReads: number[] = [];
  const count = (e: { request: { service: string } }) => void (e.request.service === 'fileRead' && fileReads.push(1));
  sim.on('request', count);
  t.teardown(() => void sim.off('request', count));
  const res = await c.api('GET', `/files/content?path=${encodeURIComponent('COMTRADE/DR_0001.DAT')}`);
  t.equal(res.status, 200);
  t.same(Buffer.from(await res.arrayBuffer()), dat, 'byte for byte');
  t.equal(fileReads.length, 3, 'three FileReads: the platform proposed 1 MiB PDUs and the device took them');
  await until('closed on the device', async () => sim.openFiles() === 0, 5000);
});
