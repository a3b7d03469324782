/**
 * File delete against libiec61850's `server_example_files`, when one runs: `LIBIEC61850_FILES_SERVER=host:port`
 * (the example takes its port as its first argument). Its file access handler refuses to delete
 * `IEDSERVER.BIN` and allows every other file, so its store (`vmd-filestore/`) needs an `IEDSERVER.BIN`
 * and one more file, which this test deletes: put a file back before running it again. Skipped without
 * the variable.
 */
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection } from '@scada/testkit/live';

const server = process.env.LIBIEC61850_FILES_SERVER;

type Problem = { status: number; code: string; deviceError?: { service: string; error: string } };
type Listing = { entries: { name: string; kind: string }[] };

t.test(
  "libiec61850's server_example_files: IEDSERVER.BIN is refused, another file deleted",
  { skip: server ? false : "set LIBIEC61850_FILES_SERVER=host:port of libiec61850's server_example_files" },
  async (t) => {
    const [host, port] = (server ?? '').split(':');
    const p = await startTestPlatform();
    t.teardown(() => p.stop());
    const c = await liveConnection(p, Number(port), { connection: { ip: host } });
    await c.connect();
    const q = encodeURIComponent;
    const names = async () => ((await (await c.api('GET', '/files')).json()) as Listing).entries.map((e) => e.name);

    const before = await names();
    t.ok(before.includes('IEDSERVER.BIN'), 'the store has IEDSERVER.BIN');
    const other = before.find((n) => n !== 'IEDSERVER.BIN' && !n.endsWith('/'));
    if (other === undefined) return void t.fail('the store needs a file besides IEDSERVER.BIN to delete');

    const refused = await c.api('DELETE', `/files?path=${q('IEDSERVER.BIN')}`);
    t.equal(refused.status, 502);
    t.match((await refused.json()) as Problem, {
      code: 'device_refused',
      deviceError: { service: 'file-delete', error: 'file-access-denied' },
    });

    const deleted = await c.api('DELETE', `/files?path=${q(other)}`);
    t.equal(deleted.status, 204, `${other} deleted`);
    const after = await names();
    t.notOk(after.includes(other), `${other} is gone`);
    t.ok(after.includes('IEDSERVER.BIN'), 'IEDSERVER.BIN is still there');

    const again = await c.api('DELETE', `/files?path=${q(other)}`);
    t.equal(again.status, 404, 'a second time: the device has no such file');

    const log = (await (await c.api('GET', '/control-log?size=3')).json()) as {
      content: { action: string; reference: string; status: number }[];
    };
    t.same(
      log.content.map((r) => [r.action, r.reference, r.status]),
      [
        ['file-delete', other, 404],
        ['file-delete', other, 204],
        ['file-delete', 'IEDSERVER.BIN', 502],
      ],
      'each deletion in the control log, newest first',
    );
  },
);
