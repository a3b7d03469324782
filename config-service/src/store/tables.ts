import { entityTable, isoDate, type Column } from './entity_table.ts';

/*
 * The tables of the config schema (migrations/0001_configuration_resources.sql) as the service reads and
 * writes them: which body field lives in which column, what each row hangs under, how lists are ordered
 * and which children keep a row from being deleted.
 */

const col = (field: string, column = field): Column => ({ field, column });
const byName = 'name collate "C"';

/** Projects of a space. */
export const projects = entityTable({
  table: 'config.projects',
  label: 'project',
  columns: [
    col('name'), col('isActive', 'is_active'), col('dsc'), col('address'), col('longitude'), col('latitude'),
    col('iconFileId', 'icon_file_id'), col('properties'),
  ],
  orderBy: byName,
  children: [
    { table: 'config.faceplates', column: 'project_id', label: 'faceplate', plural: 'faceplates' },
    { table: 'config.scripts', column: 'project_id', label: 'script', plural: 'scripts' },
  ],
});

/** Dashboard board groups of a space. */
export const boardGroups = entityTable({
  table: 'config.board_groups',
  label: 'board group',
  columns: [col('name'), col('color'), col('rank')],
  orderBy: `rank nulls last, ${byName}`,
  children: [{ table: 'config.boards', column: 'group_id', label: 'board', plural: 'boards' }],
});

/** Boards, each in a board group of the same space. */
export const boards = entityTable({
  table: 'config.boards',
  label: 'board',
  scope: { field: 'boardGroupId', column: 'group_id', label: 'board group', table: 'config.board_groups' },
  columns: [
    col('name'), col('type'), col('header'), col('x'), col('y'), col('width'), col('height'),
    col('iframeUrl', 'iframe_url'), col('animationParams', 'animation_params'), col('animationId', 'animation_id'),
    col('customHtmlId', 'custom_html_id'),
  ],
  orderBy: byName,
});

/** Faceplates, each in a project of the same space. */
export const faceplates = entityTable({
  table: 'config.faceplates',
  label: 'faceplate',
  reference: { field: 'projectId', column: 'project_id', label: 'project', table: 'config.projects' },
  columns: [col('projectId', 'project_id'), col('name'), col('color'), col('dsc'), col('svgFileId', 'svg_file_id')],
  orderBy: `${byName}, id`,
  children: [{ table: 'config.placeholders', column: 'faceplate_id', label: 'placeholder', plural: 'placeholders' }],
});

/** Placeholders, each in a faceplate of the same space. */
export const placeholders = entityTable({
  table: 'config.placeholders',
  label: 'placeholder',
  scope: { field: 'faceplateId', column: 'faceplate_id', label: 'faceplate', table: 'config.faceplates' },
  columns: [col('name'), col('type'), col('dsc'), col('order', 'sort_order'), col('group', 'group_name'), col('props')],
  orderBy: `sort_order nulls last, ${byName}`,
});

/** The code column: UTF-8 bytes in the store, a string in messages. */
const code: Column = {
  field: 'code',
  column: 'code',
  toDb: (value) => Buffer.from(String(value), 'utf8'),
  fromDb: (value) => Buffer.from(value as Uint8Array).toString('utf8'),
};

/** Scripts, each in a project of the same space. */
export const scripts = entityTable({
  table: 'config.scripts',
  label: 'script',
  reference: { field: 'projectId', column: 'project_id', label: 'project', table: 'config.projects' },
  columns: [
    col('projectId', 'project_id'), col('name'), col('type'), col('log'), code,
    { field: 'time', column: 'time', fromDb: isoDate }, col('delay'), col('period'), col('dsc'),
  ],
  orderBy: `${byName}, id`,
});
