import { Type } from '@sinclair/typebox';
import { deadlines, defineOperation, requestSchema } from '../operation.ts';
import type { ProblemCode } from '../problems.ts';
import { ObjectReference } from './live.ts';
import { binding, connectionParams, notConnected, refused } from './session_binding.ts';

/**
 * Setting groups of a connected device (IEC 61850-7-2 §8): the setting group control block (SGCB) of each
 * logical device that has one, the selection of the active group, and the edit flow: select a group for
 * edit, write its values, confirm them (or cancel). Each change is a write of the block or of the settings
 * under SE (IEC 61850-8-1), made by the replica holding the connection and kept in the control log.
 */
const tags = ['IEC 61850 sessions'];

const LogicalDevice = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_]+$',
  description:
    'The logical device (MMS domain) whose setting group control block; may be left out when the device has only one. A logical device without one answers 404.',
});

const Group = Type.Integer({
  minimum: 1,
  maximum: 255,
  description: "A setting group, 1 to the block's `numberOfGroups`; a number past it is 400 before anything is written.",
});

/** A setting group control block as the device answered it, and who edits through the platform. */
export const SettingGroupControl = Type.Object({
  ld: Type.String({ description: 'The logical device (MMS domain).' }),
  reference: Type.String({ description: 'The block: `LD/LLN0.SGCB`.' }),
  numberOfGroups: Type.Integer({ description: 'NumOfSG.' }),
  activeGroup: Type.Integer({ description: 'ActSG: the group whose values are in effect (read under SG).' }),
  editGroup: Type.Integer({ description: 'EditSG: the group selected for edit (its values read and written under SE); 0 when none is.' }),
  lastActivated: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'LActTm: when the active group was last selected; null when the device says never.',
  }),
  reservationSeconds: Type.Optional(
    Type.Integer({ description: 'ResvTms: the seconds the selection for edit is reserved, when the device has it.' }),
  ),
  editedBy: Type.Union(
    [Type.Object({ userId: Type.Union([Type.String(), Type.Null()]), username: Type.Union([Type.String(), Type.Null()]) }), Type.Null()],
    {
      description:
        'The user who selected the group for edit through the platform, while the device still has it selected on the same association; null otherwise.',
    },
  ),
});

/** A setting's value under SE, or why the device did not answer it. */
const EditValue = Type.Object({
  reference: Type.String({ description: 'The setting under SE: `LD/LN.DO.DA[SE]`.' }),
  value: Type.Optional(Type.Unknown()),
  error: Type.Optional(Type.String({ description: 'The data access error of a value the device did not read.' })),
});

/** The group selected for edit and its values under SE, as the device answered them. */
export const SettingGroupEdit = Type.Composite([
  SettingGroupControl,
  Type.Object({ values: Type.Array(EditValue, { description: 'Every setting of the logical device under SE (GetEditSGValue).' }) }),
]);

const changeErrors: readonly ProblemCode[] = [
  'not_found',
  'not_connected',
  'site_unreachable',
  'overloaded',
  'bad_request',
  'validation_failed',
  'control_in_progress',
  'device_refused',
  'upstream_timeout',
];

const oneAtATime =
  'One change of a block at a time: while one is pending, another answers 409 `control_in_progress` at once; so does a change of the edit by another user than the one who selected the group for edit, while the device still has it selected.';
const logged =
  'Kept in the control log with its outcome. A problem answered once the block is known names it in `reference` (`LD/LLN0.SGCB`). Editors of the space.';
const ldOnly = Type.Object({ ld: Type.Optional(LogicalDevice) }, { additionalProperties: false });

export const getConnectionSettingGroups = defineOperation({
  operationId: 'getConnectionSettingGroups',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Setting groups of the device',
  tags,
  description: `The setting group control block of every logical device that has one, as the device answers it now (one read of each logical device's \`LLN0$SP$SGCB\`), with the references of its settings: the attributes under SG or SE of its logical nodes, without the functional constraint (read the active group's values with \`[SG]\` and the edited group's with \`[SE]\` through \`…/read\`). An empty list when the device has none. ${notConnected}`,
  request: requestSchema({ params: connectionParams }),
  response: Type.Array(
    Type.Composite([
      SettingGroupControl,
      Type.Object({ settings: Type.Array(Type.String(), { description: 'The settings: `LD/LN.DO.DA`.' }) }),
    ]),
  ),
  http: binding('GET', '/api/connections/:connectionId/setting-groups', 200, 'viewer', [
    'not_found',
    'not_connected',
    'site_unreachable',
    'overloaded',
    'device_refused',
    'upstream_timeout',
  ]),
});

export const selectConnectionActiveSettingGroup = defineOperation({
  operationId: 'selectConnectionActiveSettingGroup',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Select the active setting group',
  tags,
  description: `SelectActiveSG: makes \`group\` the active setting group of the logical device (a write of ActSG); its values are then in effect and read under SG. Answers the block after the change. ${oneAtATime} ${notConnected} ${refused} ${logged}`,
  request: requestSchema({
    params: connectionParams,
    body: Type.Object({ ld: Type.Optional(LogicalDevice), group: Group }, { additionalProperties: false }),
  }),
  response: SettingGroupControl,
  http: {
    ...binding('POST', '/api/connections/:connectionId/setting-groups/active', 200, 'editor', changeErrors),
    consumes: ['application/json'],
  },
});

export const selectConnectionEditSettingGroup = defineOperation({
  operationId: 'selectConnectionEditSettingGroup',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Select a setting group for edit',
  tags,
  description: `SelectEditSG, the edit flow's first step: selects \`group\` for edit (a write of EditSG) and answers the block with the group's values under SE, which \`PUT …/setting-groups/edit/values\` then changes and \`POST …/setting-groups/edit/confirm\` puts into the group (or \`…/edit/cancel\` drops). The device holds the selection for this association (until confirmed, cancelled, its reservation time or the association ends); the platform holds it for the user who selected it. ${oneAtATime} ${notConnected} ${refused} ${logged}`,
  request: requestSchema({
    params: connectionParams,
    body: Type.Object({ ld: Type.Optional(LogicalDevice), group: Group }, { additionalProperties: false }),
  }),
  response: SettingGroupEdit,
  http: {
    ...binding('POST', '/api/connections/:connectionId/setting-groups/edit', 200, 'editor', changeErrors),
    consumes: ['application/json'],
  },
});

export const setConnectionEditSettingGroupValues = defineOperation({
  operationId: 'setConnectionEditSettingGroupValues',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Write values of the group selected for edit',
  tags,
  description: `SetEditSGValue: writes settings of the group selected for edit, in one request: each \`reference\` a setting of the logical device (\`LD/LN.DO.DA\`, or with \`[SE]\`; another functional constraint or logical device is 400), its value converted to its type (a value that does not fit is 400 before anything is written). Nothing is in effect before the confirmation. Answers the block with the values under SE as the device reads them back. A device that refuses any of the values (a group not selected for edit: \`temporarily-unavailable\`) is 502 \`device_refused\`, with \`deviceError\` of the first and \`values\` naming each value's outcome; the values it took stay in the edit buffer. ${oneAtATime} ${notConnected} ${logged}`,
  request: requestSchema({
    params: connectionParams,
    body: Type.Object(
      {
        ld: Type.Optional(LogicalDevice),
        values: Type.Array(Type.Object({ reference: ObjectReference, value: Type.Unknown() }, { additionalProperties: false }), {
          minItems: 1,
          maxItems: 100,
        }),
      },
      { additionalProperties: false },
    ),
  }),
  response: SettingGroupEdit,
  http: {
    ...binding('PUT', '/api/connections/:connectionId/setting-groups/edit/values', 200, 'editor', changeErrors),
    consumes: ['application/json'],
  },
});

export const confirmConnectionEditSettingGroup = defineOperation({
  operationId: 'confirmConnectionEditSettingGroup',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Confirm the values of the group selected for edit',
  tags,
  description: `ConfirmEditSGValues: the device puts the edited values into the group selected for edit (a write of CnfEdit true); they are in effect at once when it is the active group. Answers the block after the confirmation (devices such as libiec61850's end the selection then: \`editGroup\` 0) and \`confirmedGroup\`. Without a group selected for edit the device refuses (502 \`device_refused\`). ${oneAtATime} ${notConnected} ${logged}`,
  request: requestSchema({ params: connectionParams, body: ldOnly }),
  response: Type.Composite([
    SettingGroupControl,
    Type.Object({ confirmedGroup: Type.Integer({ description: 'The group whose values were confirmed.' }) }),
  ]),
  http: {
    ...binding('POST', '/api/connections/:connectionId/setting-groups/edit/confirm', 200, 'editor', changeErrors),
    consumes: ['application/json'],
  },
});

export const cancelConnectionEditSettingGroup = defineOperation({
  operationId: 'cancelConnectionEditSettingGroup',
  service: 'protocol',
  deadlineMs: deadlines.deviceMs,
  summary: 'Cancel the edit of a setting group',
  tags,
  description: `Ends the selection for edit without confirming (SelectEditSG with group 0, logged as \`select-edit-sg\` with group 0); the values written since the selection are dropped. Answers the block after. ${oneAtATime} ${notConnected} ${refused} ${logged}`,
  request: requestSchema({ params: connectionParams, body: ldOnly }),
  response: SettingGroupControl,
  http: {
    ...binding('POST', '/api/connections/:connectionId/setting-groups/edit/cancel', 200, 'editor', changeErrors),
    consumes: ['application/json'],
  },
});

/** The setting group operations; all run on the replica holding the connection. */
export const settingGroupOperations = [
  getConnectionSettingGroups,
  selectConnectionActiveSettingGroup,
  selectConnectionEditSettingGroup,
  setConnectionEditSettingGroupValues,
  confirmConnectionEditSettingGroup,
  cancelConnectionEditSettingGroup,
];
