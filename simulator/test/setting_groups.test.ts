/**
 * The simulator's setting groups as libiec61850 serves them, seen by two associations through the
 * package's client: the block read from `LLN0$SP$SGCB`, the values of each group, the selection for edit
 * held by one association (another is refused temporarily-unavailable, its end frees it), SE values
 * writable only by the editing association, SG never, and the block's read-only attributes.
 */
import t from 'tap';
import { readFile } from 'node:fs/promises';
import { Iec61850Device, MmsError, parseScl, readSettingGroupControls, writeSgcb } from '@scada/iec61850';
import { startSimulator } from '../src/server.ts';

const parsed = await parseScl(await readFile(new URL('../../test/fixtures/scl/protection_settings.icd', import.meta.url), 'utf8'));
if (!parsed.ok) throw new Error('protection_settings.icd refused');
const sim = await startSimulator({ model: parsed.model, port: 0 });
t.teardown(() => sim.stop());
const LD = 'RELPROT';

/** The data access error a refused write gives, or 'ok'. */
async function outcome(write: Promise<void>): Promise<string> {
  try {
    await write;
    return 'ok';
  } catch (e) {
    if (e instanceof MmsError) return e.text.split(': ').pop()!;
    throw e;
  }
}

t.test('blocks, groups and the edit of one association at a time', async (t) => {
  const a = await Iec61850Device.connect({ host: '127.0.0.1', port: sim.port });
  const b = await Iec61850Device.connect({ host: '127.0.0.1', port: sim.port });
  t.teardown(() => (a.close(), b.close()));
  const se = async (d: Iec61850Device) => (await d.readValues([`${LD}/PTOC1.StrVal.setMag.f[SE]`]))[0].value;
  const sgValue = async () => (await a.readValues([`${LD}/PTOC1.StrVal.setMag.f[SG]`]))[0].value;

  t.match(await readSettingGroupControls(a), [
    { ld: LD, control: { numberOfGroups: 4, activeGroup: 1, editGroup: 0, lastActivated: null } },
    { ld: 'RELEF', control: { numberOfGroups: 2, activeGroup: 2 } },
    { ld: 'RELCTRL', error: 10 },
  ]);
  t.equal(await outcome(writeSgcb(a, LD, 'ActSG', 4)), 'ok');
  t.equal(await sgValue(), 3.5, "the active group's value under SG");
  t.equal(await outcome(writeSgcb(a, LD, 'ActSG', 5)), 'object-value-invalid', 'a group past NumOfSG');

  t.equal(await outcome(a.write(`${LD}/PTOC1.StrVal.setMag.f[SE]`, 1)), 'temporarily-unavailable', 'SE before a selection');
  t.equal(await outcome(writeSgcb(a, LD, 'EditSG', 2)), 'ok');
  t.equal(await se(b), 2, "group 2's value under SE, for every association to read");
  t.equal(await outcome(writeSgcb(b, LD, 'EditSG', 3)), 'temporarily-unavailable', "another association's selection");
  t.equal(await outcome(b.write(`${LD}/PTOC1.StrVal.setMag.f[SE]`, 1)), 'temporarily-unavailable', 'and its values');
  t.equal(await outcome(writeSgcb(b, LD, 'CnfEdit')), 'object-access-denied', 'and its confirmation');
  t.equal(await outcome(a.write(`${LD}/PTOC1.StrVal.setMag.f[SE]`, 2.25)), 'ok');
  t.equal(await outcome(writeSgcb(a, LD, 'CnfEdit')), 'ok');
  t.match((await readSettingGroupControls(a, [LD]))[0].control, { editGroup: 0, activeGroup: 4 }, 'a confirmation ends the selection');
  t.equal(await outcome(writeSgcb(a, LD, 'ActSG', 2)), 'ok');
  t.equal(await sgValue(), 2.25, 'group 2 holds the confirmed value');

  t.equal(await outcome(writeSgcb(a, LD, 'EditSG', 1)), 'ok');
  await a.conclude();
  await new Promise((r) => setTimeout(r, 100));
  t.equal(await outcome(writeSgcb(b, LD, 'EditSG', 1)), 'ok', 'the end of an association ends its selection');
  t.equal(await outcome(writeSgcb(b, LD, 'EditSG', 0)), 'ok', 'EditSG 0 ends it');
});

t.test('SG and the block itself are not written', async (t) => {
  const d = await Iec61850Device.connect({ host: '127.0.0.1', port: sim.port });
  t.teardown(() => d.close());
  t.equal(await outcome(d.write(`${LD}/PTOC1.StrVal.setMag.f[SG]`, 1)), 'object-access-denied', 'SG');
  t.equal(await outcome(d.write(`${LD}/LLN0$SP$SGCB$NumOfSG`, 8)), 'object-access-denied', 'NumOfSG');
  t.equal(await outcome(writeSgcb(d, LD, 'EditSG', 0)), 'ok', 'EditSG 0 without a selection');
  const confirmFalse = d.client.write(`${LD}/LLN0$SP$SGCB$CnfEdit`, { type: 'boolean', value: false });
  t.equal(await outcome(confirmFalse), 'object-value-invalid', 'CnfEdit false');
});
