/**
 * Setting groups through the gateway against the simulator serving the repository's protection relay
 * (`fixtures/scl/protection_settings.icd`: RELPROT with four groups, RELEF with two, RELCTRL none): the
 * blocks and their settings, the active group, the edit flow (select, values, confirm, cancel), a group
 * out of range refused before anything is written, the device's refusals with their reasons, one change
 * of a block at a time and the edit held by the user who selected it, and every change in the control log.
 */
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { createServer, Socket } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { parseScl } from '@scada/iec61850';
import { startService } from '@scada/platform';
import { protocolService } from '@scada/protocol';
import { startSimulator, type Faults } from '@scada/simulator';
import { startTestPlatform } from '@scada/testkit/platform';
import { liveConnection, until } from '@scada/testkit/live';
import { signIn, type SignedIn } from '@scada/testkit/session';

const parsed = await parseScl(await readFile(new URL('./fixtures/scl/protection_settings.icd', import.meta.url), 'utf8'));
if (!parsed.ok) throw new Error(`protection_settings.icd refused: ${JSON.stringify(parsed.report.errors)}`);
const faults: Faults = {};
const sim = await startSimulator({ model: parsed.model, port: 0, faults });
t.teardown(() => sim.stop());

/** A TCP proxy to the simulator whose answers can be held back, to make a change take its time. */
const slow = { ms: 0 };
/** Called once a request's bytes reach the device (set by a test that waits for them). */
let toDevice: (() => void) | undefined;
const sockets = new Set<Socket>();
const proxy = createServer((client) => {
  const device = new Socket();
  sockets.add(client).add(device);
  device.connect(sim.port, '127.0.0.1');
  client.on('data', (chunk) => {
    toDevice?.();
    device.write(chunk);
  });
  device.on('data', (chunk) => (slow.ms ? setTimeout(() => client.write(chunk), slow.ms) : client.write(chunk)));
  for (const [a, b] of [
    [client, device],
    [device, client],
  ])
    a.on('close', () => b.destroy()).on('error', () => b.destroy());
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const proxyPort = (proxy.address() as { port: number }).port;
t.teardown(() => {
  for (const s of sockets) s.destroy();
  return new Promise<void>((resolve) => proxy.close(() => resolve()));
});

const p = await startTestPlatform({ MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '500', MMS_REQUEST_TIMEOUT_MS: '5000' });
t.teardown(() => p.stop());

const PROT = 'RELPROT';
type Problem = { status: number; code: string; detail: string; deviceError?: { service: string; error: string } };
type Block = {
  ld: string;
  reference: string;
  numberOfGroups: number;
  activeGroup: number;
  editGroup: number;
  lastActivated: string | null;
  editedBy: { userId: string; username: string } | null;
  settings?: string[];
  values?: { reference: string; value?: unknown; error?: string }[];
  confirmedGroup?: number;
};

t.test(`setting groups (${p.mode})`, async (t) => {
  const c = await liveConnection(p, proxyPort);
  const other = await signIn(p, { role: 'editor' });
  const as = (user: SignedIn, method: string, path: string, body?: unknown) =>
    fetch(`${p.url}/api/connections/${c.id}/setting-groups${path}`, {
      method,
      headers: body === undefined ? user.headers : { ...user.headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const sg = (method: string, path: string, body?: unknown) => as(c.editor, method, path, body);
  /** The block a change answered; anything but 200 fails the test with the problem. */
  const ok = async (res: Response) => {
    if (res.status !== 200) throw new Error(`${res.url.split('/setting-groups')[1] || '/'} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as Block;
  };
  const problem = async (res: Response) => (await res.json()) as Problem;
  const active = async (...refs: string[]) =>
    ((await (await c.api('POST', '/read', { references: refs.map((r) => `${PROT}/PTOC1.${r}[SG]`) })).json()) as { value: unknown }[]).map(
      (v) => v.value,
    );
  let writes = 0;
  sim.on('request', (e) => void (e.request.service === 'write' && writes++));

  t.test('a connection that is not connected answers 409 not_connected', async (t) => {
    t.equal((await problem(await sg('GET', ''))).code, 'not_connected');
    t.equal((await problem(await sg('POST', '/active', { ld: PROT, group: 2 }))).code, 'not_connected');
    await c.connect();
  });

  t.test('the blocks of the device with their settings, for any role of the space', async (t) => {
    const blocks = (await (await sg('GET', '')).json()) as Block[];
    t.match(blocks, [
      {
        ld: PROT,
        reference: `${PROT}/LLN0.SGCB`,
        numberOfGroups: 4,
        activeGroup: 1,
        editGroup: 0,
        lastActivated: null,
        editedBy: null,
        settings: [`${PROT}/PTOC1.StrVal.setMag.f`, `${PROT}/PTOC1.OpDlTmms.setVal`],
      },
      { ld: 'RELEF', numberOfGroups: 2, activeGroup: 2, settings: ['RELEF/PTEF1.StrVal.setMag.f'] },
    ]);
    t.equal(blocks.length, 2, 'RELCTRL has none');
    const viewer = await signIn(p, { role: 'viewer' });
    t.equal((await as(viewer, 'GET', '')).status, 200, 'a viewer reads them');
    t.equal((await as(viewer, 'POST', '/active', { ld: PROT, group: 2 })).status, 403, 'but changes nothing');
  });

  t.test('selecting the active group switches the values in effect', async (t) => {
    t.same(await active('StrVal.setMag.f', 'OpDlTmms.setVal'), [1, 500], 'group 1 at first');
    const before = Date.now();
    const block = await ok(await sg('POST', '/active', { ld: PROT, group: 3 }));
    t.match(block, { ld: PROT, activeGroup: 3, editGroup: 0 });
    t.ok(Date.parse(block.lastActivated!) >= before - 1000, 'LActTm is the time of the switch');
    t.same(await active('StrVal.setMag.f', 'OpDlTmms.setVal'), [3, 500], "group 3's values under SG");
    t.match(await ok(await sg('POST', '/active', { ld: 'RELEF', group: 1 })), { ld: 'RELEF', activeGroup: 1 }, 'another logical device');
  });

  t.test('what the platform rules out is refused before anything is written', async (t) => {
    const before = writes;
    const past = await sg('POST', '/active', { ld: PROT, group: 5 });
    t.equal(past.status, 400, 'a group past NumOfSG');
    t.match((await problem(past)).detail, /4 setting groups/);
    t.equal((await sg('POST', '/edit', { ld: 'RELEF', group: 3 })).status, 400, 'for edit too');
    t.equal((await sg('POST', '/active', { ld: PROT, group: 0 })).status, 400, 'group 0 is no group');
    const ambiguous = await sg('POST', '/active', { group: 1 });
    t.equal(ambiguous.status, 400, 'two blocks and no ld');
    t.match((await problem(ambiguous)).detail, /RELPROT, RELEF/);
    t.equal((await sg('POST', '/active', { ld: 'RELCTRL', group: 1 })).status, 404, 'a logical device without a block');
    t.equal((await sg('POST', '/edit', { ld: PROT, group: 1 })).status, 200);
    t.equal(
      (await sg('PUT', '/edit/values', { ld: PROT, values: [{ reference: `${PROT}/PTOC1.Op.general[ST]`, value: true }] })).status,
      400,
      'a value under another FC than SE',
    );
    t.equal(
      (await sg('PUT', '/edit/values', { ld: PROT, values: [{ reference: 'RELEF/PTEF1.StrVal.setMag.f', value: 1 }] })).status,
      400,
      'a setting of another logical device',
    );
    t.equal(
      (await sg('PUT', '/edit/values', { ld: PROT, values: [{ reference: `${PROT}/PTOC1.OpDlTmms.setVal`, value: 'soon' }] })).status,
      400,
      'a value that does not fit its type',
    );
    t.equal(writes - before, 1, 'only the selection for edit was written');
    t.equal((await sg('POST', '/edit/cancel', { ld: PROT })).status, 200);
  });

  t.test('the edit flow: select, write, confirm', async (t) => {
    const selected = await ok(await sg('POST', '/edit', { ld: PROT, group: 2 }));
    t.match(selected, { editGroup: 2, activeGroup: 3, editedBy: { username: c.editor.username } });
    t.same(
      selected.values,
      [
        { reference: `${PROT}/PTOC1.StrVal.setMag.f[SE]`, value: 2 },
        { reference: `${PROT}/PTOC1.OpDlTmms.setVal[SE]`, value: 1500 },
      ],
      "group 2's values under SE",
    );
    const written = await ok(
      await sg('PUT', '/edit/values', {
        ld: PROT,
        values: [
          { reference: `${PROT}/PTOC1.StrVal.setMag.f`, value: 2.5 },
          { reference: `${PROT}/PTOC1.OpDlTmms.setVal[SE]`, value: 1750 },
        ],
      }),
    );
    t.same(
      written.values?.map((v) => v.value),
      [2.5, 1750],
      'the device reads them back',
    );
    await sg('POST', '/active', { ld: PROT, group: 2 });
    t.same(await active('StrVal.setMag.f', 'OpDlTmms.setVal'), [2, 1500], 'nothing is in effect before the confirmation');
    const confirmed = await ok(await sg('POST', '/edit/confirm', { ld: PROT }));
    t.match(confirmed, { confirmedGroup: 2, editGroup: 0, editedBy: null }, 'the simulator, as libiec61850, ends the selection');
    t.same(await active('StrVal.setMag.f', 'OpDlTmms.setVal'), [2.5, 1750], 'the active group takes its confirmed values');
  });

  t.test('a cancelled edit drops its values', async (t) => {
    await ok(await sg('POST', '/edit', { ld: PROT, group: 4 }));
    await ok(await sg('PUT', '/edit/values', { ld: PROT, values: [{ reference: `${PROT}/PTOC1.StrVal.setMag.f`, value: 9 }] }));
    t.match(await ok(await sg('POST', '/edit/cancel', { ld: PROT })), { editGroup: 0, editedBy: null });
    const again = await ok(await sg('POST', '/edit', { ld: PROT, group: 4 }));
    t.equal(again.values?.[0].value, 3.5, "group 4's value as before");
    await sg('POST', '/edit/cancel', { ld: PROT });
  });

  t.test("the device's refusals carry its reason", async (t) => {
    const values = await sg('PUT', '/edit/values', { ld: PROT, values: [{ reference: `${PROT}/PTOC1.StrVal.setMag.f`, value: 1 }] });
    t.equal(values.status, 502, 'values without a group selected for edit');
    t.match(await problem(values), {
      code: 'device_refused',
      reference: `${PROT}/LLN0.SGCB`,
      deviceError: { service: 'set-edit-sg-values', error: 'temporarily-unavailable' },
      values: [{ reference: `${PROT}/PTOC1.StrVal.setMag.f[SE]`, outcome: 'temporarily-unavailable' }],
    });
    t.match(
      await problem(await sg('POST', '/edit/confirm', { ld: PROT })),
      { status: 502, deviceError: { service: 'confirm-edit-sg-values', error: 'object-access-denied' } },
      'a confirmation without one',
    );
    faults.refuseWrites = { [`${PROT}/LLN0$SP$SGCB$ActSG`]: 3 };
    t.match(
      await problem(await sg('POST', '/active', { ld: PROT, group: 1 })),
      { status: 502, code: 'device_refused', deviceError: { service: 'select-active-sg', error: 'object-access-denied' } },
      'a selection of the active group',
    );
    delete faults.refuseWrites;
  });

  t.test('the edit belongs to the user who selected it', async (t) => {
    await ok(await sg('POST', '/edit', { ld: PROT, group: 1 }));
    for (const [method, path, body] of [
      ['PUT', '/edit/values', { ld: PROT, values: [{ reference: `${PROT}/PTOC1.StrVal.setMag.f`, value: 7 }] }],
      ['POST', '/edit/confirm', { ld: PROT }],
      ['POST', '/edit/cancel', { ld: PROT }],
      ['POST', '/edit', { ld: PROT, group: 3 }],
    ] as const) {
      const res = await as(other, method, path, body);
      t.equal(res.status, 409, `another user's ${method} ${path}`);
      const body409 = await problem(res);
      t.equal(body409.code, 'control_in_progress');
      t.match(body409.detail, c.editor.username, 'names who edits');
    }
    const seen = (await (await as(other, 'GET', '')).json()) as Block[];
    t.match(seen[0], { editGroup: 1, editedBy: { username: c.editor.username } }, 'and anyone sees who');
    t.equal((await as(other, 'POST', '/active', { ld: PROT, group: 1 })).status, 200, 'the active group is not the edit');
    t.equal((await as(other, 'POST', '/edit', { ld: 'RELEF', group: 1 })).status, 200, 'nor is another block');
    await as(other, 'POST', '/edit/cancel', { ld: 'RELEF' });

    faults.editReservationMs = 300;
    await ok(await sg('POST', '/edit', { ld: PROT, group: 2 }));
    await new Promise((r) => setTimeout(r, 600));
    t.equal(
      (await as(other, 'POST', '/edit', { ld: PROT, group: 2 })).status,
      200,
      'once the reservation ran out on the device, another may edit',
    );
    delete faults.editReservationMs;
    await as(other, 'POST', '/edit/cancel', { ld: PROT });

    await ok(await sg('POST', '/edit', { ld: PROT, group: 3 }));
    await sim.restart();
    await until('reconnected', async () => {
      const s = await c.session();
      return s.state === 'connected' && Number(s.reconnects) > 0;
    });
    const afresh = await as(other, 'POST', '/edit', { ld: PROT, group: 3 });
    t.equal(afresh.status, 200, 'and after a new association');
    await as(other, 'POST', '/edit/cancel', { ld: PROT });
  });

  t.test('one change of a block at a time', async (t) => {
    // The device's answers come a second late: the first change holds the block until then. The second is
    // asked once the first has reached the device, so it is asked while the first is under way.
    slow.ms = 1000;
    const reached = new Promise<void>((r) => (toDevice = r));
    let firstDone = false;
    const first = sg('POST', '/active', { ld: PROT, group: 4 }).finally(() => (firstDone = true));
    await reached;
    toDevice = undefined;
    const second = await sg('POST', '/edit', { ld: PROT, group: 1 });
    t.equal(second.status, 409);
    t.equal((await problem(second)).code, 'control_in_progress');
    t.notOk(firstDone, 'at once, not after the first');
    t.equal((await sg('POST', '/active', { ld: 'RELEF', group: 2 })).status, 200, 'another block is not held up');
    t.match(await ok(await first), { activeGroup: 4 }, 'the first gets its own outcome');
    slow.ms = 0;
    t.equal((await sg('POST', '/active', { ld: PROT, group: 1 })).status, 200, 'once done, the block takes the next');
  });

  t.test('through a replica that does not hold the connection', async (t) => {
    const second = await startService(protocolService, {
      bus: p.proc.bus,
      store: p.proc.store!,
      log: p.proc.log,
      config: p.proc.config.services.protocol as never,
      instance: 'replica-two',
    });
    t.teardown(() => second.stop());
    const rows = async () => ((await (await c.api('GET', '/control-log?size=1')).json()) as { totalElements: number }).totalElements;
    const before = await rows();
    for (const group of [2, 3, 4, 1]) t.match(await ok(await sg('POST', '/active', { ld: PROT, group })), { activeGroup: group });
    await ok(await sg('POST', '/edit', { ld: PROT, group: 2 }));
    for (let i = 0; i < 4; i++)
      t.equal((await as(other, 'POST', '/edit/cancel', { ld: PROT })).status, 409, "another user's cancel, wherever it arrives");
    t.match(await ok(await sg('POST', '/edit/cancel', { ld: PROT })), { editGroup: 0 });
    t.equal(await rows(), before + 10, 'each change once in the control log');
    t.equal((await c.session()).heldBy, p.proc.services.find((s) => s.name === 'protocol')!.instance, 'held where it was');
  });

  t.test('every change is in the control log, with the user', async (t) => {
    type Entry = {
      username: string;
      action: string;
      reference: string;
      value: unknown;
      outcome: string;
      status: number;
      deviceError: unknown;
    };
    const log = (await (await c.api('GET', '/control-log?size=500')).json()) as { content: Entry[] };
    const mine = log.content.filter((e) => e.username === c.editor.username).reverse();
    const matches = (e: Entry, what: Partial<Entry>) => Object.entries(what).every(([k, v]) => isDeepStrictEqual(e[k as keyof Entry], v));
    const has = (what: Partial<Entry>, label: string) =>
      t.ok(
        mine.some((e) => matches(e, what)),
        label,
      );
    has(
      { action: 'select-active-sg', reference: `${PROT}/LLN0.SGCB`, value: { group: 3 }, outcome: 'ok', status: 200 },
      'a selection of the active group',
    );
    has({ action: 'select-edit-sg', value: { group: 2 }, outcome: 'ok' }, 'a selection for edit');
    has(
      {
        action: 'set-edit-sg-values',
        value: {
          values: [
            { reference: `${PROT}/PTOC1.StrVal.setMag.f`, value: 2.5 },
            { reference: `${PROT}/PTOC1.OpDlTmms.setVal[SE]`, value: 1750 },
          ],
        },
        outcome: 'ok',
      },
      'the values written',
    );
    has({ action: 'confirm-edit-sg-values', value: { group: 2 }, outcome: 'ok' }, 'a confirmation, with its group');
    has({ action: 'select-edit-sg', value: { group: 0 }, outcome: 'ok' }, 'a cancel');
    has({ action: 'select-active-sg', value: { group: 5 }, outcome: 'bad_request', status: 400 }, 'a group out of range');
    has(
      {
        action: 'set-edit-sg-values',
        outcome: 'device_refused',
        deviceError: { service: 'set-edit-sg-values', error: 'temporarily-unavailable' },
      },
      "a refusal with the device's reason",
    );
    has({ action: 'select-edit-sg', outcome: 'control_in_progress', status: 409 }, 'a change refused while another ran');
    const others = log.content.filter((e) => e.username === other.username);
    t.ok(
      others.some((e) => e.action === 'set-edit-sg-values' && e.outcome === 'control_in_progress'),
      "another user's change of the edit, refused",
    );
  });
});
