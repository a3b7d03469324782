/**
 * Setting groups of a connected device (IEC 61850-7-2 §8): the blocks with their settings, the active
 * group, and the edit flow (select a group for edit, write its values, confirm or cancel). Every change runs
 * on the replica holding the connection, against its association: the group asked for is checked against
 * the block's NumOfSG before anything is written (400), one change of a block runs at a time and the edit
 * belongs to the user who selected it (409 `control_in_progress`, see `sessions/setting_group_edits.ts`),
 * and the answer is the block as the device reads it afterwards. The replica a request reached keeps each
 * change in the control log.
 */
import {
  cancelConnectionEditSettingGroup,
  confirmConnectionEditSettingGroup,
  getConnectionSettingGroups,
  ProblemError,
  selectConnectionActiveSettingGroup,
  selectConnectionEditSettingGroup,
  setConnectionEditSettingGroupValues,
  type Operation,
} from '@scada/contracts';
import { implement, type HandlerContext, type Implementation } from '@scada/platform';
import type { LiveDevice, SettingGroupBlock } from '../sessions/live_device.ts';
import type { Session } from '../sessions/session.ts';
import type { Editor } from '../sessions/setting_group_edits.ts';
import type { ControlLogAction } from '../store/control_log.ts';
import { deviceRunner, withControlLog, type DeviceOpsDeps } from './device_ops.ts';

type Request = { params: { connectionId: string }; body: { ld?: string } };

/** The block as the API answers it: with the user editing it through the platform. */
function view(session: Session, device: LiveDevice, block: SettingGroupBlock) {
  return { ...block, editedBy: session.settingGroups.editorOf(device, block) };
}

function who(ctx: HandlerContext): Editor {
  return { userId: ctx.actor?.id ?? null, username: ctx.actor?.name ?? null };
}

/** A group the block has: 1..NumOfSG, or 400 before anything is written. */
function checkGroup(block: SettingGroupBlock, group: number): void {
  if (group > block.numberOfGroups)
    throw new ProblemError(
      'bad_request',
      `Logical device ${block.ld} has ${block.numberOfGroups} setting groups (1-${block.numberOfGroups}); there is no group ${group}`,
    );
}

/** The logical device asked for, or the only one with a block: 404 with none, 400 with several. */
async function logicalDevice(device: LiveDevice, ld: string | undefined): Promise<string> {
  if (ld !== undefined) return ld;
  const blocks = await device.settingGroupControls();
  if (blocks.length === 1) return blocks[0].ld;
  if (blocks.length === 0) throw new ProblemError('not_found', 'The device has no setting group control block');
  throw new ProblemError(
    'bad_request',
    `The device has setting group control blocks in ${blocks.map((b) => b.ld).join(', ')}: name the logical device (ld)`,
  );
}

/** The values under SE of every setting of `ld`, as the device reads them now (GetEditSGValue). */
async function editValues(device: LiveDevice, ld: string) {
  const references = (await device.settingReferences(ld)).map((r) => `${r}[SE]`);
  if (references.length === 0) return [];
  const read = await device.read(references);
  return references.map((reference, i) => {
    const r = read[i];
    return r === undefined || 'error' in r ? { reference, error: r?.error ?? 'not read' } : { reference, value: r.value };
  });
}

/** The 502 for values of the edit the device refused: the first one's reason, and how each value went. */
function valuesRefused(ld: string, results: { reference: string; error?: string }[]): ProblemError {
  const refused = results.filter((r) => r.error !== undefined);
  return new ProblemError(
    'device_refused',
    `The device refused set-edit-sg-values of ${refused.map((r) => `${r.reference} (${r.error})`).join(', ')} in ${ld}`,
    {
      extensions: {
        deviceError: { service: 'set-edit-sg-values', error: refused[0].error },
        values: results.map((r) => ({ reference: r.reference, outcome: r.error ?? 'ok' })),
      },
    },
  );
}

/** The setting group operations; `forward` as for {@link deviceOperations}. */
export function settingGroupOperations(deps: DeviceOpsDeps, forward: boolean): Implementation[] {
  const onDevice = deviceRunner(deps);

  /**
   * One change of a block: the logical device resolved, then (one change of it at a time) its block read
   * afresh and `work` run on it, on the holder; kept in the control log by the replica the request reached.
   */
  const change = <T>(
    op: Operation,
    req: Request,
    ctx: HandlerContext,
    log: { action: ControlLogAction; value: (answer: T | undefined) => unknown },
    work: (device: LiveDevice, session: Session, block: SettingGroupBlock) => Promise<T>,
  ): Promise<T> => {
    const run = () =>
      onDevice(
        op,
        req,
        ctx,
        async (device, session) => {
          const ld = await logicalDevice(device, req.body.ld);
          try {
            return await session.settingGroups.exclusive(ld, async () => work(device, session, await device.settingGroupControl(ld)));
          } catch (err) {
            // the block the change was for, also when the request did not name it
            if (err instanceof ProblemError) err.extensions.reference ??= `${ld}/LLN0.SGCB`;
            throw err;
          }
        },
        forward,
      );
    if (!forward) return run();
    const fallback = `${req.body.ld === undefined ? '' : `${req.body.ld}/`}LLN0.SGCB`;
    const describe = (answer: T | undefined, problem: ProblemError | null) => ({
      action: log.action,
      reference:
        (answer as { reference?: string } | undefined)?.reference ?? (problem?.extensions.reference as string | undefined) ?? fallback,
      value: log.value(answer),
    });
    return withControlLog(deps.store, ctx, req.params.connectionId, 200, describe, run);
  };

  /** The block read after a change, as the API answers it. */
  const after = async (device: LiveDevice, session: Session, ld: string) => view(session, device, await device.settingGroupControl(ld));

  return [
    implement(getConnectionSettingGroups, (req, ctx) =>
      onDevice(
        getConnectionSettingGroups,
        req,
        ctx,
        async (device, session) => {
          const blocks = await device.settingGroupControls();
          return Promise.all(blocks.map(async (b) => ({ ...view(session, device, b), settings: await device.settingReferences(b.ld) })));
        },
        forward,
      ),
    ),
    implement(selectConnectionActiveSettingGroup, (req, ctx) =>
      change(
        selectConnectionActiveSettingGroup,
        req,
        ctx,
        { action: 'select-active-sg', value: () => ({ group: req.body.group }) },
        async (device, session, block) => {
          checkGroup(block, req.body.group);
          await device.writeSettingGroupControl(block.ld, 'ActSG', req.body.group);
          return after(device, session, block.ld);
        },
      ),
    ),
    implement(selectConnectionEditSettingGroup, (req, ctx) =>
      change(
        selectConnectionEditSettingGroup,
        req,
        ctx,
        { action: 'select-edit-sg', value: () => ({ group: req.body.group }) },
        async (device, session, block) => {
          checkGroup(block, req.body.group);
          session.settingGroups.checkEditor(device, block, who(ctx));
          await device.writeSettingGroupControl(block.ld, 'EditSG', req.body.group);
          session.settingGroups.hold(device, block.ld, who(ctx));
          return { ...(await after(device, session, block.ld)), values: await editValues(device, block.ld) };
        },
      ),
    ),
    implement(setConnectionEditSettingGroupValues, (req, ctx) =>
      change(
        setConnectionEditSettingGroupValues,
        req,
        ctx,
        { action: 'set-edit-sg-values', value: () => ({ values: req.body.values }) },
        async (device, session, block) => {
          session.settingGroups.checkEditor(device, block, who(ctx));
          const results = await device.setEditValues(block.ld, req.body.values);
          if (results.some((r) => r.error !== undefined)) throw valuesRefused(block.ld, results);
          return { ...(await after(device, session, block.ld)), values: await editValues(device, block.ld) };
        },
      ),
    ),
    implement(confirmConnectionEditSettingGroup, (req, ctx) =>
      change(
        confirmConnectionEditSettingGroup,
        req,
        ctx,
        { action: 'confirm-edit-sg-values', value: (answer) => ({ group: answer?.confirmedGroup ?? null }) },
        async (device, session, block) => {
          session.settingGroups.checkEditor(device, block, who(ctx));
          await device.writeSettingGroupControl(block.ld, 'CnfEdit');
          return { ...(await after(device, session, block.ld)), confirmedGroup: block.editGroup };
        },
      ),
    ),
    implement(cancelConnectionEditSettingGroup, (req, ctx) =>
      change(
        cancelConnectionEditSettingGroup,
        req,
        ctx,
        { action: 'select-edit-sg', value: () => ({ group: 0 }) },
        async (device, session, block) => {
          session.settingGroups.checkEditor(device, block, who(ctx));
          await device.writeSettingGroupControl(block.ld, 'EditSG', 0);
          session.settingGroups.release(block.ld);
          return after(device, session, block.ld);
        },
      ),
    ),
  ];
}
