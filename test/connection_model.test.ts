/**
 * What an operator reads of a connection's model and live values: units and descriptions from the SCL
 * file in the browse answer, enumerations named, and report blocks a connection lists in `enableReports`
 * enabled when its session starts, so values arrive without a manual step. Bad lists are 400.
 */
import t from 'tap';
import { parseScl } from '@scada/iec61850';
import { startSimulator } from '@scada/simulator';
import { FIXTURE_SCL } from '@scada/testkit/simulator_fixture';
import { liveConnection } from '@scada/testkit/live';
import { startTestPlatform } from '@scada/testkit/platform';
import { signIn } from '@scada/testkit/session';
import { isEvent, openSse } from '@scada/testkit/sse';

/** The simulator's fixture with a unit (`kV` as SIUnit ord 29 and multiplier `k`) and descriptions on `AnIn1`. */
const SCL = FIXTURE_SCL.replace(
  '<DOI name="AnIn1"><SDI name="mag"><DAI name="f"><Val>1.5</Val></DAI></SDI></DOI>',
  `<DOI name="AnIn1" desc="Busbar voltage"><SDI name="mag"><DAI name="f" desc="Voltage magnitude"><Val>1.5</Val></DAI></SDI>
     <SDI name="units"><DAI name="SIUnit"><Val>29</Val></DAI><DAI name="multiplier"><Val>k</Val></DAI></SDI></DOI>`,
)
  .replace(
    '<DA name="db" bType="INT32U" fc="CF"/>',
    '<DA name="db" bType="INT32U" fc="CF" desc="Deadband"/><DA name="units" bType="Struct" type="Unit" fc="CF"/>',
  )
  .replace('<DO name="Ind1" type="SPS_T"/>', '<DO name="Ind1" type="SPS_T" desc="Breaker closed"/>')
  .replace(
    '<EnumType id="OrCat">',
    `<DAType id="Unit"><BDA name="SIUnit" bType="Enum" type="SIUnit"/><BDA name="multiplier" bType="Enum" type="multiplier"/></DAType>
     <EnumType id="SIUnit" desc="SI units"><EnumVal ord="5">A</EnumVal><EnumVal ord="29">V</EnumVal></EnumType>
     <EnumType id="multiplier"><EnumVal ord="0"></EnumVal><EnumVal ord="3">k</EnumVal></EnumType>
     <EnumType id="OrCat">`,
  );
const parsed = await parseScl(SCL);
if (!parsed.ok) throw new Error(JSON.stringify(parsed.report.errors));

const sim = await startSimulator({ model: parsed.model, port: 0 });
t.teardown(() => sim.stop());
const p = await startTestPlatform({ SESSION_LEASE_SECONDS: '3', MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '500' });
t.teardown(() => p.stop());
const D = 'SIMLD0';
const rcb = `${D}/LLN0$RP$urcb01`;

type Attribute = { name: string; desc?: string; unit?: string };
type DataObject = { name: string; desc?: string; unit?: string; attributes: Attribute[] };
type Tree = {
  source: string;
  enumTypes: { id: string; desc?: string }[];
  ieds: { logicalDevices: { logicalNodes: { name: string; dataObjects: DataObject[] }[] }[] }[];
};

t.test('the browse answer carries units, descriptions and enumeration names from the SCL file', async (t) => {
  const c = await liveConnection(p, sim.port, { scl: SCL });
  const res = await c.api('GET', '/browse');
  t.equal(res.status, 200);
  const tree = (await res.json()) as Tree;
  t.equal(tree.source, 'scl');
  const ggio = tree.ieds[0].logicalDevices[0].logicalNodes.find((ln) => ln.name === 'GGIO1')!;
  const anIn1 = ggio.dataObjects.find((d) => d.name === 'AnIn1')!;
  t.match(anIn1, { desc: 'Busbar voltage', unit: 'kV' }, "the data object's instance description and its unit");
  const attribute = (name: string) => anIn1.attributes.find((a) => a.name === name);
  t.match(attribute('mag.f'), { desc: 'Voltage magnitude', unit: 'kV' }, 'the measured value has the unit of its data object');
  t.match(attribute('db'), { desc: 'Deadband' }, "the template's attribute description");
  t.equal(attribute('db')?.unit, undefined, 'a deadband is not in the unit of the measurement');
  t.equal(attribute('q')?.unit, undefined, 'nor is a quality');
  t.match(
    ggio.dataObjects.find((d) => d.name === 'Ind1'),
    { desc: 'Breaker closed' },
    "the logical node type's DO description",
  );
  t.match(
    tree.enumTypes.find((e) => e.id === 'SIUnit'),
    { id: 'SIUnit', desc: 'SI units' },
    'an enumeration is named by its id, with its description',
  );
  t.ok(
    tree.enumTypes.every((e) => typeof e.id === 'string' && e.id.length > 0),
    'every enumeration has its id',
  );
});

t.test('a connection that lists a report block gets values once started, without enabling the block by hand', async (t) => {
  const viewer = await signIn(p, { role: 'viewer' });
  const c = await liveConnection(p, sim.port, { scl: SCL, connection: { enableReports: [rcb] } });
  const stored = (await (await fetch(`${p.url}/api/connections/${c.id}`, { headers: c.editor.headers })).json()) as {
    enableReports: string[];
  };
  t.same(stored.enableReports, [rcb], 'the connection keeps the list');
  t.same(await (await c.api('GET', '/reports')).json(), [], 'nothing is enabled before the session starts');

  const stream = await openSse(`${p.url}/api/live?connections=${c.id}&topics=values`, viewer.headers);
  t.teardown(() => stream.close());
  await stream.wait(isEvent('snapshot'));
  await c.connect();
  // The general interrogation sends every member of the block's data set at once.
  const value = await stream.wait(
    isEvent('value', (d) => d.connectionId === c.id && String(d.reference).includes('Ind1')),
    20_000,
  );
  t.match(value, { data: { rcb } }, 'a value of the listed block arrives');
  t.match(await (await c.api('GET', '/reports')).json(), [{ rcb, generalInterrogation: true }], 'the block is kept enabled');
  t.match(await (await c.api('GET', '/browse')).json(), { source: 'device' }, 'while connected the browse is the device model');
  const scl = await c.api('GET', '/browse?source=scl');
  t.equal(scl.status, 200);
  t.match(
    await scl.json(),
    { source: 'scl', enumTypes: [{ id: 'CtlModels' }] },
    'and with source=scl the model of the file, units and all',
  );
  t.equal((await c.api('GET', '/browse?source=device')).status, 400, 'a source other than scl is 400');
  t.equal((await c.api('POST', '/stop')).status, 204);
});

t.test('a start by project enables the listed blocks too; a block disabled by hand stays off until the next start', async (t) => {
  const c = await liveConnection(p, sim.port, { connection: { enableReports: [rcb] } });
  const { projectId } = (await (await fetch(`${p.url}/api/connections/${c.id}`, { headers: c.editor.headers })).json()) as {
    projectId: string;
  };
  const byProject = (verb: 'start' | 'stop') =>
    fetch(`${p.url}/api/connections/${verb}/by-project?projectId=${projectId}`, { method: 'POST', headers: c.editor.headers });
  const kept = async () => ((await (await c.api('GET', '/reports')).json()) as { rcb: string }[]).map((r) => r.rcb);
  t.equal((await byProject('start')).status, 204);
  t.same(await kept(), [rcb], 'kept enabled from the start');
  t.equal((await c.api('DELETE', `/reports?rcb=${encodeURIComponent(rcb)}`)).status, 204);
  t.equal((await byProject('start')).status, 204);
  t.same(await kept(), [], 'starting a started connection changes nothing');
  t.equal((await byProject('stop')).status, 204);
  t.equal((await byProject('start')).status, 204);
  t.same(await kept(), [rcb], 'the next start enables it again');
  t.equal((await byProject('stop')).status, 204);
});

t.test('a listed report block the SCL file does not declare is a warning of the connection, not a refusal', async (t) => {
  const typo = `${D}/LLN0$RP$urcbx01`;
  const c = await liveConnection(p, sim.port, { scl: SCL, connection: { enableReports: [rcb, typo] } });
  const read = async () =>
    (
      (await (await fetch(`${p.url}/api/connections/${c.id}`, { headers: c.editor.headers })).json()) as {
        sclFile: { connectionWarnings: { code: string; message: string }[] };
      }
    ).sclFile.connectionWarnings.filter((w) => w.code === 'report_block_not_in_scl');
  const warnings = await read();
  t.equal(warnings.length, 1, 'one warning');
  t.match(warnings[0].message, typo, 'naming the block the file does not declare');
  const current = (await (await fetch(`${p.url}/api/connections/${c.id}`, { headers: c.editor.headers })).json()) as Record<
    string,
    unknown
  >;
  const body = { name: current.name, ip: current.ip, port: current.port, projectId: current.projectId, protocol: 'IEC 61850' };
  const json = { ...c.editor.headers, 'content-type': 'application/json' };
  const put = (extra: Record<string, unknown>) =>
    fetch(`${p.url}/api/connections/${c.id}`, { method: 'PUT', headers: json, body: JSON.stringify({ ...body, ...extra }) });
  t.equal((await put({})).status, 204);
  t.equal((await read()).length, 1, 'a replacement that keeps the list keeps the warning');
  t.equal((await put({ enableReports: [rcb] })).status, 204);
  t.same(await read(), [], 'the list mended, the warning is gone');
});

t.test('a replacement without enableReports keeps the list; [] empties it', async (t) => {
  const c = await liveConnection(p, sim.port, { connection: { enableReports: [rcb] } });
  const json = { ...c.editor.headers, 'content-type': 'application/json' };
  const current = (await (await fetch(`${p.url}/api/connections/${c.id}`, { headers: c.editor.headers })).json()) as Record<
    string,
    unknown
  >;
  const body = { name: current.name, ip: current.ip, port: current.port, projectId: current.projectId, protocol: 'IEC 61850' };
  const put = (extra: Record<string, unknown>) =>
    fetch(`${p.url}/api/connections/${c.id}`, { method: 'PUT', headers: json, body: JSON.stringify({ ...body, ...extra }) });
  const read = async () =>
    ((await (await fetch(`${p.url}/api/connections/${c.id}`, { headers: c.editor.headers })).json()) as { enableReports: string[] })
      .enableReports;
  t.equal((await put({})).status, 204);
  t.same(await read(), [rcb], 'kept');
  t.equal((await put({ enableReports: [] })).status, 204);
  t.same(await read(), [], 'emptied');
});

t.test('bad values of enableReports are 400, on every route that takes a connection', async (t) => {
  const c = await liveConnection(p, sim.port);
  const current = (await (await fetch(`${p.url}/api/connections/${c.id}`, { headers: c.editor.headers })).json()) as Record<
    string,
    unknown
  >;
  const base = { name: 'bad-reports', ip: '127.0.0.1', port: sim.port, projectId: current.projectId, protocol: 'IEC 61850' };
  const json = { ...c.editor.headers, 'content-type': 'application/json' };
  const bad: [string, unknown][] = [
    ['not a list', rcb],
    ['null', null],
    ['a number', [7]],
    ['a data attribute, not a report block', [`${D}/GGIO1$ST$Ind1$stVal`]],
    ['a control block of another kind', [`${D}/LLN0$GO$gcb01`]],
    ['the dotted notation', [`${D}/LLN0.urcb01`]],
    ['no logical device', ['LLN0$RP$urcb01']],
    ['an empty name', ['']],
    ['a name with a space', [`${D}/LLN0$RP$urcb 01`]],
    ['the same block twice', [rcb, rcb]],
    ['more than 64', Array.from({ length: 65 }, (_, i) => `${D}/LLN0$RP$urcb${i}`)],
  ];
  for (const [what, enableReports] of bad) {
    const form = new FormData();
    form.set('connection', JSON.stringify({ ...base, enableReports }));
    const created = await fetch(`${p.url}/api/protocols/iec61850/connections/with-file`, {
      method: 'POST',
      headers: c.editor.headers,
      body: form,
    });
    t.equal(created.status, 400, `${what}: create with file`);
    t.match(await created.json(), { code: 'validation_failed' });
    const plain = await fetch(`${p.url}/api/connections`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ ...base, enableReports }),
    });
    t.equal(plain.status, 400, `${what}: create`);
    const replaced = await fetch(`${p.url}/api/connections/${c.id}`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({ ...base, name: 'sim', enableReports }),
    });
    t.equal(replaced.status, 400, `${what}: replace`);
  }
  const listed = (await (await fetch(`${p.url}/api/connections`, { headers: c.editor.headers })).json()) as { name: string }[];
  t.notOk(
    listed.some((x) => x.name === 'bad-reports'),
    'nothing was stored',
  );
});
