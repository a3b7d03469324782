import { existsSync, readFileSync, readdirSync } from 'node:fs';
import t from 'tap';
import { startTestPlatform, type TestPlatform } from '@scada/testkit/platform';
import { generateScd } from '@scada/testkit/scd';
import { createSpace, signIn, type SignedIn } from '@scada/testkit/session';

// The real-world files beside the repository add checks when they are there; the tests stand on the
// project's own file.
const sclDir = new URL('../../shared/scl/', import.meta.url);
const shared = existsSync(sclDir) ? readdirSync(sclDir).filter((f) => /\.(icd|cid|scd|iid|ssd)$/i.test(f)) : [];
const sample = new URL('fixtures/scl/feeder_relay.icd', import.meta.url);

const p = await startTestPlatform();
t.teardown(() => p.stop());

const base = '/api/protocols/iec61850/connections';

function form(connection: unknown, file?: { name: string; bytes: Uint8Array | string }, extra?: (f: FormData) => void): FormData {
  const f = new FormData();
  if (connection !== undefined) f.set('connection', typeof connection === 'string' ? connection : JSON.stringify(connection));
  if (file) f.set('file', new Blob([file.bytes as BlobPart]), file.name);
  extra?.(f);
  return f;
}

async function project(q: TestPlatform, who: SignedIn, name: string): Promise<string> {
  const res = await fetch(`${q.url}/api/projects`, {
    method: 'POST',
    headers: { ...who.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ name, isActive: true }),
  });
  if (res.status !== 200) throw new Error(`project: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

const upload = (q: TestPlatform, who: SignedIn, body: FormData, id?: string) =>
  fetch(id ? `${q.url}${base}/${id}/with-file` : `${q.url}${base}/with-file`, { method: id ? 'PUT' : 'POST', headers: who.headers, body });

t.test(`IEC 61850 connections with SCL files (${p.mode})`, async (t) => {
  const editor = await signIn(p, { role: 'editor' });
  const projectId = await project(p, editor, `substation-${Date.now()}`);
  const connection = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    ip: '10.0.0.5',
    port: 102,
    projectId,
    protocol: 'IEC 61850',
    ...extra,
  });

  t.test(
    'every shared SCL file uploads or is refused for a reason, and what is kept reads back byte for byte',
    { skip: shared.length ? false : 'no ../shared/scl' },
    async (t) => {
      for (const file of shared) {
        const bytes = readFileSync(new URL(file, sclDir));
        const res = await upload(p, editor, form(connection(`c-${file}`), { name: file, bytes }));
        if (file === 'sampleModel_errors.icd') {
          t.equal(res.status, 400, `${file} is refused`);
          const problem = (await res.json()) as { code: string; errors: { message: string }[] };
          t.equal(problem.code, 'scl_invalid');
          t.match(problem.errors[0]?.message, /^line \d+, column \d+: /, 'with line and column');
          continue;
        }
        t.equal(res.status, 200, `${file} is accepted`);
        const created = (await res.json()) as { id: string; sclFile: { size: number; sha256: string; edition: string } };
        t.equal(created.sclFile.size, bytes.length);
        const back = await fetch(`${p.url}${base}/${created.id}/file`, { headers: editor.headers });
        t.equal(back.status, 200);
        t.match(back.headers.get('content-type'), /application\/xml/);
        t.same(Buffer.from(await back.arrayBuffer()), bytes, `${file} reads back byte for byte`);
        const tree = await fetch(`${p.url}/api/connections/${created.id}/browse`, { headers: editor.headers });
        t.equal(tree.status, 200);
        t.ok(((await tree.json()) as { ieds: unknown[] }).ieds.length > 0, 'the browse tree has IEDs');
      }
    },
  );

  t.test('reads, listings by project, status, update without a file keeps the file, delete', async (t) => {
    const bytes = readFileSync(sample);
    const created = (await (await upload(p, editor, form(connection('keeper'), { name: 'sampleModel.icd', bytes }))).json()) as {
      id: string;
    };
    const one = await fetch(`${p.url}/api/connections/${created.id}`, { headers: editor.headers });
    t.match(await one.json(), { id: created.id, name: 'keeper', protocol: 'IEC 61850', port: 102, sclFile: { name: 'sampleModel.icd' } });
    const byProject = (await (
      await fetch(`${p.url}/api/connections/by-project?projectId=${projectId}`, { headers: editor.headers })
    ).json()) as { name: string }[];
    t.ok(byProject.some((c) => c.name === 'keeper'));
    t.equal(await (await fetch(`${p.url}/api/connections/${created.id}/status`, { headers: editor.headers })).json(), 'Disconnected');
    t.equal((await upload(p, editor, form(connection('keeper', { port: 10102 })), created.id)).status, 204, 'update without a file');
    const after = (await (await fetch(`${p.url}/api/connections/${created.id}`, { headers: editor.headers })).json()) as {
      port: number;
      sclFile: { size: number } | null;
    };
    t.equal(after.port, 10102);
    t.equal(after.sclFile?.size, bytes.length, 'the file is kept');
    const bad = await upload(p, editor, form(connection('keeper'), { name: 'broken.icd', bytes: '<SCL><IED' }), created.id);
    t.equal(bad.status, 400, 'a broken file');
    const still = await fetch(`${p.url}${base}/${created.id}/file`, { headers: editor.headers });
    t.same(Buffer.from(await still.arrayBuffer()), bytes, 'a failed update leaves the previous file');
    t.equal((await fetch(`${p.url}${base}/${created.id}/with-file`, { method: 'DELETE', headers: editor.headers })).status, 204);
    t.equal((await fetch(`${p.url}/api/connections/${created.id}`, { headers: editor.headers })).status, 404);
  });

  t.test('bad input answers a 4xx and stores nothing', async (t) => {
    const before = ((await (await fetch(`${p.url}/api/connections`, { headers: editor.headers })).json()) as unknown[]).length;
    const bytes = readFileSync(sample);
    const cases: [string, BodyInit, number, string?][] = [
      ['no connection part', form(undefined, { name: 'a.icd', bytes }), 400],
      ['connection not JSON', form('{name:', { name: 'a.icd', bytes }), 400, 'malformed_body'],
      ['Modbus TCP', form(connection('x', { protocol: 'Modbus TCP' })), 400, 'validation_failed'],
      ['port 65536', form(connection('x', { port: 65536 })), 400, 'validation_failed'],
      ['unknown project', form(connection('x', { projectId: '00000000-0000-4000-8000-000000000000' })), 404, 'not_found'],
      ['two files', form(connection('x'), { name: 'a.icd', bytes }, (f) => f.append('file', new Blob([bytes]), 'b.icd')), 400],
      ['another part', form(connection('x'), undefined, (f) => f.set('extra', new Blob(['x']), 'x.bin')), 400],
      [
        'XXE',
        form(connection('x'), {
          name: 'x.icd',
          bytes:
            '<?xml version="1.0"?><!DOCTYPE SCL [<!ENTITY x SYSTEM "file:///etc/passwd">]><SCL xmlns="http://www.iec.ch/61850/2003/SCL">&x;</SCL>',
        }),
        400,
        'scl_invalid',
      ],
      [
        'billion laughs',
        form(connection('x'), {
          name: 'x.icd',
          bytes: '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]><SCL>&b;</SCL>',
        }),
        400,
        'scl_invalid',
      ],
      ['truncated XML', form(connection('x'), { name: 'x.icd', bytes: bytes.subarray(0, 500) }), 400, 'scl_invalid'],
      [
        'a PNG named .icd',
        form(connection('x'), { name: 'x.icd', bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]) }),
        400,
        'scl_invalid',
      ],
    ];
    for (const [name, body, status, code] of cases) {
      const res = await upload(p, editor, body as FormData);
      t.equal(res.status, status, name);
      if (code) t.match(await res.json(), { code }, name);
    }
    const json = await fetch(`${p.url}${base}/with-file`, {
      method: 'POST',
      headers: { ...editor.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ connection: connection('x') }),
    });
    t.equal(json.status, 415, 'a JSON body');
    const viewer = await signIn(p, { role: 'viewer' });
    t.equal((await upload(p, viewer, form(connection('x')))).status, 403, 'a viewer');
    const after = ((await (await fetch(`${p.url}/api/connections`, { headers: editor.headers })).json()) as unknown[]).length;
    t.equal(after, before, 'nothing was stored');
  });

  t.test('encodings and model errors through the API: UTF-16 and a BOM are read, duplicate IEDs and unknown types refused', async (t) => {
    const text = readFileSync(sample, 'utf8');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text.replace(/encoding="[^"]*"/, 'encoding="UTF-16"'), 'utf16le')]);
    t.equal((await upload(p, editor, form(connection('utf16'), { name: 'u.icd', bytes: utf16 }))).status, 200, 'UTF-16 with a BOM');
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    t.equal((await upload(p, editor, form(connection('bom'), { name: 'b.icd', bytes: bom }))).status, 200, 'UTF-8 with a BOM');
    const ied = /<IED [\s\S]*?<\/IED>/.exec(text)?.[0] ?? '';
    const twice = text.replace(ied, `${ied}\n${ied}`);
    const dup = await upload(p, editor, form(connection('dup'), { name: 'd.icd', bytes: twice }));
    t.equal(dup.status, 400, 'two IEDs of one name');
    t.match(await dup.json(), { code: 'scl_invalid' });
    const undefinedType = text.replace(/lnType="([^"]+)"/, 'lnType="NoSuchType"');
    t.equal(
      (await upload(p, editor, form(connection('type'), { name: 't.icd', bytes: undefinedType }))).status,
      400,
      'an LNodeType nothing defines',
    );
  });

  t.test(
    'a file with a type repeated identically and an empty type id used consistently is kept with warnings; report blocks browse as the device names them',
    async (t) => {
      const bytes = readFileSync(new URL('fixtures/scl/lenient_types.icd', import.meta.url));
      const res = await upload(p, editor, form(connection('lenient'), { name: 'lenient.icd', bytes }));
      t.equal(res.status, 200);
      const created = (await res.json()) as { id: string; sclFile: { warnings: { message: string; line: number }[] } };
      t.match(created.sclFile.warnings, [
        { message: 'DOType id LEN_SPS is defined twice, identically; the first definition is used', line: 32 },
        { message: 'EnumType with an empty id; 1 reference with an empty type name it', line: 33 },
      ]);
      const tree = (await (await fetch(`${p.url}/api/connections/${created.id}/browse`, { headers: editor.headers })).json()) as {
        ieds: {
          logicalDevices: { logicalNodes: { name: string; reportControls: { instances: { name: string; ref: string }[] }[] }[] }[];
        }[];
      };
      t.same(
        tree.ieds[0].logicalDevices[0].logicalNodes[0].reportControls[0].instances,
        [{ name: 'EventsRCB01', ref: 'LEN1LD0/LLN0$RP$EventsRCB01' }],
        'an indexed block of one instance is EventsRCB01',
      );
      const changed = bytes
        .toString()
        .replace(
          /(<DOType id="LEN_SPS" cdc="SPS"><DA name="stVal" fc="ST" bType=")BOOLEAN("\/><DA name="q" fc="ST" bType="Quality"\/><\/DOType>\s*<EnumType id="">)/,
          '$1INT32$2',
        );
      t.not(changed, bytes.toString(), 'the repeat changed');
      const refused = await upload(p, editor, form(connection('conflicting'), { name: 'conflicting.icd', bytes: changed }));
      t.equal(refused.status, 400, 'a repeat with another content is refused');
      t.match(await refused.json(), { code: 'scl_invalid', errors: [{ message: /DOType id LEN_SPS is defined twice, differently/ }] });
    },
  );

  t.test('a body that declares 1 GiB is refused before it is read', async (t) => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${p.url}${base}/with-file`,
        {
          method: 'POST',
          headers: { ...editor.headers, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(1024 ** 3) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.write('--x\r\n');
    });
    t.equal(status, 413);
  });

  t.test('two concurrent updates of one connection both answer 204 and the last committed wins whole', async (t) => {
    const bytes = readFileSync(sample);
    const { id } = (await (await upload(p, editor, form(connection('racy'), { name: 'a.icd', bytes }))).json()) as { id: string };
    const [a, b] = await Promise.all([
      upload(p, editor, form(connection('racy', { port: 1001 }), { name: 'one.icd', bytes }), id),
      upload(p, editor, form(connection('racy', { port: 1002 }), { name: 'two.icd', bytes }), id),
    ]);
    t.same([a.status, b.status], [204, 204]);
    const after = (await (await fetch(`${p.url}/api/connections/${id}`, { headers: editor.headers })).json()) as {
      port: number;
      sclFile: { name: string };
    };
    t.ok(
      (after.port === 1001 && after.sclFile.name === 'one.icd') || (after.port === 1002 && after.sclFile.name === 'two.icd'),
      'connection and file from the same update',
    );
  });

  t.test('another space: its project and its connections do not exist for the caller', async (t) => {
    const other = await createSpace(p, `plant-${Date.now()}`);
    const stranger = await signIn(p, { role: 'editor', spaces: [other] });
    const foreign = await project(p, stranger, 'foreign');
    const res = await upload(p, editor, form(connection('x', { projectId: foreign })));
    t.equal(res.status, 404, 'a project of another space');
    const mine = (await (await upload(p, editor, form(connection('mine')))).json()) as { id: string };
    t.equal((await fetch(`${p.url}/api/connections/${mine.id}`, { headers: stranger.headers })).status, 404);
    t.equal((await fetch(`${p.url}${base}/${mine.id}/file`, { headers: stranger.headers })).status, 404);
    t.equal((await fetch(`${p.url}${base}/${mine.id}/with-file`, { method: 'DELETE', headers: stranger.headers })).status, 404);
  });

  t.test('browse by IED; a model too large for one answer is refused with the names to browse by', async (t) => {
    const station = generateScd(2);
    const res = await upload(p, editor, form(connection('station', { ip: '10.0.0.0' }), { name: 'station.scd', bytes: station }));
    t.equal(res.status, 200, 'a two-IED station file is kept');
    const { id } = (await res.json()) as { id: string };
    const browse = (query = '') => fetch(`${p.url}/api/connections/${id}/browse${query}`, { headers: editor.headers });
    const whole = await browse();
    t.equal(whole.status, 413, 'the whole tree (1.3 MB of JSON) does not fit one answer');
    const problem = (await whole.json()) as { code: string; ieds: string[]; detail: string };
    t.equal(problem.code, 'payload_too_large');
    t.same(problem.ieds, ['IED0', 'IED1'], 'the problem names the IEDs');
    t.match(problem.detail, /\?ied=/);
    const one = await browse('?ied=IED1');
    t.equal(one.status, 200);
    const tree = (await one.json()) as {
      edition: string;
      ieds: { name: string; logicalDevices: { logicalNodes: unknown[] }[] }[];
      subNetworks: unknown[];
    };
    t.same(
      tree.ieds.map((i) => i.name),
      ['IED1'],
      'only the IED asked for',
    );
    t.equal(tree.ieds[0].logicalDevices.length, 4);
    t.equal(tree.ieds[0].logicalDevices[0].logicalNodes.length, 131);
    t.equal(tree.edition, '2007B4');
    t.equal(tree.subNetworks.length, 1, 'with the rest of the tree');
    t.equal((await browse('?ied=IED7')).status, 404, 'an IED the file does not describe');
    t.equal((await browse('?ied=')).status, 400, 'an empty name');
    t.equal((await browse('?colour=red')).status, 400, 'an unknown parameter');
    const small = await upload(p, editor, form(connection('sample-browse'), { name: 'sample.icd', bytes: readFileSync(sample) }));
    const smallId = ((await small.json()) as { id: string }).id;
    const named = (await (await fetch(`${p.url}/api/connections/${smallId}/browse`, { headers: editor.headers })).json()) as {
      ieds: { name: string }[];
    };
    const filtered = await fetch(`${p.url}/api/connections/${smallId}/browse?ied=${named.ieds[0].name}`, { headers: editor.headers });
    t.same(
      ((await filtered.json()) as { ieds: { name: string }[] }).ieds.map((i) => i.name),
      [named.ieds[0].name],
      'a small file browses whole or by IED',
    );
  });

  t.test('a 3 MiB SCL crosses the bus in chunks and reads back identically', async (t) => {
    const text = readFileSync(sample, 'utf8');
    const pad = Array.from({ length: 64 }, (_, i) => `<Private type="pad-${i}">${'x'.repeat(52_000)}</Private>`).join('\n');
    const big = Buffer.from(text.replace(/(<Header[^>]*\/>|<\/Header>)/, `$1\n${pad}`));
    t.ok(big.length > 3 * 1024 * 1024, `${big.length} bytes`);
    const res = await upload(p, editor, form(connection('big'), { name: 'big.scd', bytes: big }));
    t.equal(res.status, 200);
    const { id } = (await res.json()) as { id: string };
    const back = await fetch(`${p.url}${base}/${id}/file`, { headers: editor.headers });
    t.same(Buffer.from(await back.arrayBuffer()), big);
  });
});

t.test('a file over MAX_SCL_BYTES answers 413', async (t) => {
  const q = await startTestPlatform({ MAX_SCL_BYTES: '4096' });
  t.teardown(() => q.stop());
  const editor = await signIn(q, { role: 'editor' });
  const projectId = await project(q, editor, 'small');
  const res = await upload(
    q,
    editor,
    form({ name: 'x', ip: '10.0.0.5', port: 102, projectId, protocol: 'IEC 61850' }, { name: 'x.icd', bytes: 'x'.repeat(8192) }),
  );
  t.equal(res.status, 413);
  t.match(await res.json(), { code: 'payload_too_large' });
});
