import { Type, type TSchema } from '@sinclair/typebox';
import { EntityName, noNulPattern, OneOf, UnicodeText } from './kinds.ts';
import { ConfigId, ConfigIdOf, defineResource, optional, required } from './resource.ts';

/*
 * The configuration resources, each defined once (`resource.ts` makes their schemas, operations and
 * table mapping), with the fields, enums and limits of the reference interface (ProjectRequestDto,
 * DashboardGroupRequestDto, DashboardRequestDto, FaceplateRequestDto, FaceplatePlaceholderRequestDto,
 * RepeatableScriptRequestDto and their response forms).
 */

export { ConfigId, ConfigIdOf };

/** Description of a reference to a project. */
const projectRef = 'Id of a project of the same space; a missing project, or one of another space, is 404.';

const int32Max = 2 ** 31 - 1;

/** A 32-bit integer, at least `minimum` (default -2^31). */
function Int32(minimum = -(2 ** 31)): TSchema {
  return Type.Integer({ format: 'int32', minimum, maximum: int32Max });
}

/** Field kinds: each a request schema with its limits, and the plainer schema an answer shows. */
const field = {
  name: (description: string) => required(EntityName(description), Type.String()),
  boolean: () => required(Type.Boolean(), Type.Boolean()),
  int32: (minimum?: number) => required(Int32(minimum), Type.Integer({ format: 'int32' })),
  double: () => required(Type.Number({ format: 'double' }), Type.Number({ format: 'double' })),
  /** Free text of at most `max` characters. */
  note: (max: number) => required(UnicodeText({ maxLength: max, pattern: noNulPattern }), Type.String()),
  color: () => required(UnicodeText({ maxLength: 7, format: 'color', description: 'A colour as `#rrggbb`.' }), Type.String()),
  url: () =>
    required(UnicodeText({ maxLength: 2048, format: 'http-url', description: 'An absolute `http:` or `https:` URL.' }), Type.String()),
  dateTime: () => required(Type.String({ format: 'date-time' }), Type.String({ format: 'date-time' })),
  oneOf: <S extends TSchema>(schema: S) => required(schema, schema),
  projectRef: () => required(ConfigIdOf(projectRef), ConfigId),
};

const missingProject = "A `projectId` that does not exist, or names another space's project, is 404.";
const missingGroup = 'A board group that does not exist, or belongs to another space, is 404.';
const missingFaceplate = 'A faceplate that does not exist, or belongs to another space, is 404.';
const byNameThenId = 'Ordered by name (Unicode code point order), then id; names are unique per project.';

/** Projects of a space. */
export const projectResource = defineResource({
  entity: 'project',
  stem: { one: 'Project', many: 'Projects' },
  label: 'project',
  plural: 'projects',
  tags: ['Projects'],
  path: '/api/projects',
  id: { param: 'projectId', description: 'Id of a project of the space (a UUID).' },
  fields: {
    name: field.name('Unique among the projects of the space (compared exactly).'),
    isActive: field.boolean(),
    dsc: optional(field.note(255)),
    address: optional(field.note(255)),
    longitude: optional(field.double()),
    latitude: optional(field.double()),
    iconFileId: optional(field.note(36)),
    properties: optional(field.note(32767)),
  },
  describe: { request: 'A project of the space.', response: 'A project.' },
  bodyWrapper: 'project',
  children: 'faceplates or scripts',
  docs: {
    list: 'Ordered by name (Unicode code point order); names are unique in the list.',
    get: 'A project of another space is 404, as one that does not exist.',
  },
});

/** Dashboard board groups of a space. */
export const boardGroupResource = defineResource({
  entity: 'board_group',
  stem: { one: 'BoardGroup', many: 'BoardGroups' },
  label: 'board group',
  plural: 'board groups',
  tags: ['Dashboards'],
  path: '/api/dashboard',
  id: { param: 'boardGroupId', description: 'Id of a board group of the space (a UUID).' },
  fields: {
    name: field.name('Unique among the board groups of the space (compared exactly).'),
    color: optional(field.color()),
    rank: optional(field.int32(0)),
  },
  describe: { request: 'A dashboard board group.', response: 'A dashboard board group.' },
  children: 'boards',
  docs: {
    list: 'Ordered by rank (groups without a rank last), then by name (Unicode code point order); names are unique in the list.',
    get: missingGroup,
  },
});

/** Kinds of board. */
export const BoardType = OneOf(['Animation', 'Html', 'Iframe']);

/** Boards, each in a board group of the same space. */
export const boardResource = defineResource({
  entity: 'board',
  stem: { one: 'Board', many: 'Boards' },
  label: 'board',
  plural: 'boards',
  tags: ['Dashboards'],
  path: '/api/dashboard/:boardGroupId/boards',
  id: { param: 'boardId', description: 'Id of a board of that group (a UUID).' },
  parent: { param: 'boardGroupId', label: 'board group', joined: 'in', description: 'Id of a board group of the space (a UUID).' },
  fields: {
    name: field.name('Unique among the boards of its group (compared exactly).'),
    type: field.oneOf(BoardType),
    header: field.boolean(),
    x: optional(field.int32(0)),
    y: optional(field.int32(0)),
    width: optional(field.int32(1)),
    height: optional(field.int32(1)),
    iframeUrl: optional(field.url()),
    animationParams: optional(field.note(32767)),
    animationId: optional(field.note(36)),
    customHtmlId: optional(field.note(36)),
  },
  describe: { request: 'A dashboard board.', response: 'A dashboard board.' },
  missing: { create: missingGroup },
  docs: {
    list: `Ordered by name (Unicode code point order); names are unique in the list. ${missingGroup}`,
    get: 'A board that is not in that group of the space is 404.',
    update:
      'Replaces every field; optional fields left out are cleared; the board stays in its group. A name already used in the same parent is 409 `conflict`.',
  },
});

/** Faceplates, each in a project of the same space. */
export const faceplateResource = defineResource({
  entity: 'faceplate',
  stem: { one: 'Faceplate', many: 'Faceplates' },
  label: 'faceplate',
  plural: 'faceplates',
  tags: ['Faceplates'],
  path: '/api/faceplates',
  id: { param: 'faceplateId', description: 'Id of a faceplate of the space (a UUID).' },
  fields: {
    name: field.name('Unique among the faceplates of its project (compared exactly).'),
    projectId: field.projectRef(),
    color: optional(field.color()),
    dsc: optional(field.note(255)),
    svgFileId: optional(field.note(36)),
  },
  describe: { request: 'A faceplate.', response: 'A faceplate.' },
  bodyWrapper: 'faceplate',
  children: 'placeholders or animations',
  missing: { create: missingProject, update: missingProject },
  docs: { list: byNameThenId, get: missingFaceplate },
});

/** Kinds of placeholder. */
export const PlaceholderType = OneOf(['number', 'text', 'tag', 'combo', 'color', 'animation']);

/** Placeholders, each in a faceplate of the same space. */
export const placeholderResource = defineResource({
  entity: 'placeholder',
  stem: { one: 'FaceplatePlaceholder', many: 'FaceplatePlaceholders' },
  label: 'placeholder',
  plural: 'placeholders',
  tags: ['Faceplates'],
  path: '/api/faceplates/:faceplateId/placeholders',
  id: { param: 'placeholderId', description: 'Id of a placeholder of that faceplate (a UUID).' },
  parent: { param: 'faceplateId', label: 'faceplate', joined: 'of', description: 'Id of a faceplate of the space (a UUID).' },
  fields: {
    name: field.name('Unique among the placeholders of its faceplate (compared exactly).'),
    type: field.oneOf(PlaceholderType),
    dsc: optional(field.note(255)),
    order: optional(field.int32()),
    group: optional(field.note(100)),
    props: optional(field.note(32767)),
  },
  describe: { request: 'A placeholder of a faceplate.', response: 'A placeholder of a faceplate.' },
  missing: { create: missingFaceplate },
  docs: {
    list: `Ordered by \`order\` (placeholders without one last), then by name (Unicode code point order); names are unique in the list. ${missingFaceplate}`,
    get: 'A placeholder that is not in that faceplate of the space is 404.',
    update:
      'Replaces every field; optional fields left out are cleared (204). Concurrent replacements of one ' +
      'placeholder each answer 204 and the one committed last wins; no version check. A name already used in the same parent is 409 `conflict`.',
  },
});

/** Kinds of script schedule. */
export const ScriptType = OneOf(['Periodic', 'Daily', 'Once', 'None']);

/** Longest script, in Unicode characters. */
export const maxScriptCharacters = 65535;

/** The code of a script: any Unicode text, NUL included, kept byte for byte. */
export const ScriptCode = UnicodeText({
  maxLength: maxScriptCharacters,
  description: `Source code: at most ${maxScriptCharacters} Unicode characters; empty is allowed; kept byte for byte.`,
});

/** Scripts, each in a project of the same space. */
export const scriptResource = defineResource({
  entity: 'script',
  stem: { one: 'Script', many: 'Scripts' },
  label: 'script',
  plural: 'scripts',
  tags: ['Scripts'],
  path: '/api/scripts',
  id: { param: 'scriptId', description: 'Id of a script of the space (a UUID).' },
  fields: {
    name: field.name('Unique among the scripts of its project (compared exactly).'),
    projectId: field.projectRef(),
    type: field.oneOf(ScriptType),
    log: field.boolean(),
    code: required(ScriptCode, Type.String()),
    time: optional(field.dateTime()),
    delay: optional(field.int32(0)),
    period: optional(field.int32(100)),
    offset: optional(field.int32(0)),
    dsc: optional(field.note(255)),
  },
  describe: {
    request: 'A repeatable script. `offset` (ms) shifts the grid a `Periodic` script runs on.',
    response: 'A repeatable script.',
  },
  missing: { create: missingProject, update: missingProject },
  docs: { list: byNameThenId, get: 'The code reads back byte for byte as it was sent. A script of another space is 404.' },
});

/** The lowest and highest alarm priority (1 is the most urgent), as the reference's alarm groups have them. */
export const alarmPriorityRange = { min: 1, max: 255 } as const;

/** An alarm priority: 1 (most urgent) to 255. */
const AlarmPriority = (description: string) =>
  Type.Integer({ minimum: alarmPriorityRange.min, maximum: alarmPriorityRange.max, description });

const missingAlarmGroup = "A `groupId` that does not exist, or names another space's alarm group, is 404.";

/** Alarm groups, each in a project of the same space: a name and the range its alarms' priorities lie in. */
export const alarmGroupResource = defineResource({
  entity: 'alarm_group',
  stem: { one: 'AlarmGroup', many: 'AlarmGroups' },
  label: 'alarm group',
  plural: 'alarm groups',
  tags: ['Alarms'],
  path: '/api/alarm-groups',
  id: { param: 'alarmGroupId', description: 'Id of an alarm group of the space (a UUID).' },
  fields: {
    name: field.name('Unique among the alarm groups of its project (compared exactly).'),
    projectId: field.projectRef(),
    minPriority: required(AlarmPriority('The most urgent priority an alarm of the group may have (1 is the most urgent).'), Type.Integer()),
    maxPriority: required(
      AlarmPriority('The least urgent priority an alarm of the group may have; not below `minPriority`.'),
      Type.Integer(),
    ),
    dsc: optional(field.note(255)),
  },
  describe: {
    request: `An alarm group. \`minPriority\` ≤ \`maxPriority\`, both ${alarmPriorityRange.min} to ${alarmPriorityRange.max}; otherwise 400 \`validation_failed\`.`,
    response: 'An alarm group.',
  },
  children: 'alarms',
  extension: true,
  missing: { create: missingProject, update: missingProject },
  docs: {
    list: byNameThenId,
    get: 'An alarm group of another space is 404. `getProjectStatus` reports each group `Active` while any of its alarms is not `normal`.',
  },
});

/** What an alarm watches: a boolean's state, an analog value against limits, the value's quality, or its age. */
export const AlarmType = OneOf(['state', 'analog', 'quality', 'stale']);

/** The longest on-delay, in milliseconds (one hour). */
export const maxAlarmOnDelayMs = 3_600_000;

/** Alarms on a data attribute of a connection, each in an alarm group of the same space. */
export const alarmResource = defineResource({
  entity: 'alarm',
  stem: { one: 'AlarmDefinition', many: 'AlarmDefinitions' },
  label: 'alarm',
  plural: 'alarms',
  tags: ['Alarms'],
  path: '/api/alarm-definitions',
  id: { param: 'alarmId', description: 'Id of an alarm of the space (a UUID).' },
  fields: {
    name: field.name('Unique among the alarms of its group (compared exactly).'),
    groupId: required(ConfigIdOf('Id of an alarm group of the same space; a missing group, or one of another space, is 404.'), ConfigId),
    connectionId: required(ConfigIdOf('Id of an IEC 61850 connection of the same space; one the space does not hold is 404.'), ConfigId),
    reference: required(
      UnicodeText({
        minLength: 1,
        maxLength: 255,
        pattern: noNulPattern,
        description:
          'The data attribute watched, as `LD/LN.DO.DA[FC]` (or `LD/LN$FC$DO$DA`): a part of a reported data object (`LD/GGIO1.AnIn1.mag.f[MX]`) is taken from it. While the connection has an SCL file, a logical device, logical node or data object its model does not hold is 400.',
      }),
      Type.String(),
    ),
    type: field.oneOf(AlarmType),
    priority: required(AlarmPriority("1 (most urgent) to 255, within its group's range."), Type.Integer()),
    message: required(
      UnicodeText({ minLength: 1, maxLength: 255, pattern: noNulPattern, description: 'What the operator reads.' }),
      Type.String(),
    ),
    alarmWhen: optional(
      required(Type.Boolean({ description: '`state` alarms: the value that is the alarm (true or false).' }), Type.Boolean()),
    ),
    hh: optional(field.double()),
    h: optional(field.double()),
    l: optional(field.double()),
    ll: optional(field.double()),
    deadband: optional(
      required(
        Type.Number({
          minimum: 0,
          description: '`analog` alarms: how far back inside a limit the value must come before the alarm returns to normal.',
        }),
        Type.Number(),
      ),
    ),
    staleSeconds: optional(
      required(
        Type.Integer({ minimum: 1, maximum: 86_400, description: '`stale` alarms: the alarm comes when no value arrived for this long.' }),
        Type.Integer(),
      ),
    ),
    onDelayMs: optional(
      required(
        Type.Integer({
          minimum: 0,
          maximum: maxAlarmOnDelayMs,
          description: 'The condition must hold this long before the alarm comes (chatter that clears sooner raises nothing).',
        }),
        Type.Integer(),
      ),
    ),
    dsc: optional(field.note(255)),
  },
  describe: {
    request:
      "An alarm on a data attribute of a connection. `state`: needs `alarmWhen`. `analog`: needs at least one of `hh`, `h`, `l`, `ll`, in the order `ll` < `l` < `h` < `hh` (those given); `deadband` 0 by default. `quality`: the alarm comes while the value's validity is not `good`. `stale`: needs `staleSeconds`. Fields of another type are 400, as are limits out of order and a priority outside the group's range (`validation_failed`, the detail names the reason).",
    response: 'An alarm definition.',
  },
  extension: true,
  missing: { create: missingAlarmGroup, update: missingAlarmGroup },
  docs: {
    list: byNameThenId,
    get: 'An alarm of another space is 404. Its state is `GET /api/alarms/active`.',
  },
});

/** Answers the lookups return (`lookup_ops.ts`); every schema of a resource is on its definition. */
export const ProjectResponse = projectResource.response;
export const FaceplateResponse = faceplateResource.response;
export const ScriptResponse = scriptResource.response;
