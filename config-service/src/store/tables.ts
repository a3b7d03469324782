import {
  alarmGroupResource,
  alarmResource,
  animationResource,
  boardGroupResource,
  boardResource,
  faceplateResource,
  placeholderResource,
  projectResource,
  scriptResource,
  type Fields,
} from '@scada/contracts';
import { entityTable, isoDate, type Column } from './entity_table.ts';

/*
 * The tables of the config schema (migrations/0001_configuration_resources.sql) as the service reads and
 * writes them: what each row hangs under, how lists are ordered and which children keep a row from being
 * deleted. Which field lives in which column follows from the resource's definition in contracts: a field
 * is kept in the column of its name in snake_case, unless a table names another column or a codec here.
 */

const byName = 'name collate "C"';

/** The columns of a resource's fields: `isActive` in `is_active`, unless `special` says otherwise. */
function columnsOf(fields: Fields, special: Record<string, Partial<Column>> = {}): Column[] {
  return Object.keys(fields).map((field) => ({ field, column: field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), ...special[field] }));
}

/** Projects of a space. */
export const projects = entityTable({
  table: 'config.projects',
  label: projectResource.label,
  columns: columnsOf(projectResource.fields),
  orderBy: byName,
  children: [
    { table: 'config.faceplates', column: 'project_id', label: 'faceplate', plural: 'faceplates' },
    { table: 'config.scripts', column: 'project_id', label: 'script', plural: 'scripts' },
    { table: 'config.alarm_groups', column: 'project_id', label: 'alarm group', plural: 'alarm groups' },
    { table: 'config.animations', column: 'project_id', label: 'animation', plural: 'animations' },
  ],
});

/** Dashboard board groups of a space. */
export const boardGroups = entityTable({
  table: 'config.board_groups',
  label: boardGroupResource.label,
  columns: columnsOf(boardGroupResource.fields),
  orderBy: `rank nulls last, ${byName}`,
  children: [{ table: 'config.boards', column: 'group_id', label: 'board', plural: 'boards' }],
});

/** Boards, each in a board group of the same space. */
export const boards = entityTable({
  table: 'config.boards',
  label: boardResource.label,
  scope: { field: 'boardGroupId', column: 'group_id', label: 'board group', table: 'config.board_groups' },
  columns: columnsOf(boardResource.fields),
  orderBy: byName,
});

/** Faceplates, each in a project of the same space. */
export const faceplates = entityTable({
  table: 'config.faceplates',
  label: faceplateResource.label,
  reference: { field: 'projectId', column: 'project_id', label: 'project', table: 'config.projects' },
  columns: columnsOf(faceplateResource.fields),
  orderBy: `${byName}, id`,
  children: [
    { table: 'config.placeholders', column: 'faceplate_id', label: 'placeholder', plural: 'placeholders' },
    { table: 'config.animations', column: 'faceplate_id', label: 'animation', plural: 'animations' },
  ],
});

/** Placeholders, each in a faceplate of the same space. */
export const placeholders = entityTable({
  table: 'config.placeholders',
  label: placeholderResource.label,
  scope: { field: 'faceplateId', column: 'faceplate_id', label: 'faceplate', table: 'config.faceplates' },
  // `order` and `group` are SQL keywords.
  columns: columnsOf(placeholderResource.fields, { order: { column: 'sort_order' }, group: { column: 'group_name' } }),
  orderBy: `sort_order nulls last, ${byName}`,
});

/** The code column: UTF-8 bytes in the store, a string in messages. */
const code: Partial<Column> = {
  toDb: (value) => Buffer.from(String(value), 'utf8'),
  fromDb: (value) => Buffer.from(value as Uint8Array).toString('utf8'),
};

/** Scripts, each in a project of the same space. */
export const scripts = entityTable({
  table: 'config.scripts',
  label: scriptResource.label,
  reference: { field: 'projectId', column: 'project_id', label: 'project', table: 'config.projects' },
  // `offset` is an SQL keyword.
  columns: columnsOf(scriptResource.fields, { code, time: { fromDb: isoDate }, offset: { column: 'offset_ms' } }),
  orderBy: `${byName}, id`,
});

/** Alarm groups, each in a project of the same space. */
export const alarmGroups = entityTable({
  table: 'config.alarm_groups',
  label: alarmGroupResource.label,
  reference: { field: 'projectId', column: 'project_id', label: 'project', table: 'config.projects' },
  columns: columnsOf(alarmGroupResource.fields),
  orderBy: `${byName}, id`,
  children: [{ table: 'config.alarms', column: 'group_id', label: 'alarm', plural: 'alarms' }],
});

/** Alarms, each in an alarm group of the same space. */
export const alarms = entityTable({
  table: 'config.alarms',
  label: alarmResource.label,
  reference: { field: 'groupId', column: 'group_id', label: 'alarm group', table: 'config.alarm_groups' },
  columns: columnsOf(alarmResource.fields),
  orderBy: `${byName}, id`,
});

/** A JSON column: sent as its text, read as the value the driver parsed. */
const json: Partial<Column> = {
  toDb: (value) => JSON.stringify(value),
  fromDb: (value) => (typeof value === 'string' ? JSON.parse(value) : value),
};

/** Animations, each in a project of the same space. */
export const animations = entityTable({
  table: 'config.animations',
  label: animationResource.label,
  reference: { field: 'projectId', column: 'project_id', label: 'project', table: 'config.projects' },
  columns: columnsOf(animationResource.fields, { bindings: json, placeholders: json }),
  orderBy: `${byName}, id`,
});
