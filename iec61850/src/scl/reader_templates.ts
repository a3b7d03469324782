/**
 * Element handlers for `DataTypeTemplates`: LNodeType/DO, DOType/SDO/DA, DAType/BDA, EnumType/EnumVal,
 * and the default values (`Val`) of attributes. References between types are checked after the last
 * byte (`validate_templates.ts`), since a type may be named before it is defined.
 */
import type { BdaDefinition, DaDefinition, DaType, DoDefinition, DoType, EnumType, LNodeType, SdoDefinition } from './model.ts';
import { attr, enter, intern, need, optional, typeName, type Closer, type Opener, type ReadContext, type Tag } from './reader_context.ts';
import type { Origin } from './report.ts';

/** Array size: a number, or (edition 2) the name of the attribute that holds it, which is not kept. */
function arrayCount(ctx: ReadContext, tag: Tag, origin: Origin): number | undefined {
  const value = attr(ctx, tag, 'count', origin)?.trim();
  return value !== undefined && /^\d{1,9}$/.test(value) ? Number(value) : undefined;
}

const lNodeType: Opener = (ctx, tag, _parent, origin) => {
  const node: LNodeType = { id: typeName(ctx, tag, 'id', origin), lnClass: need(ctx, tag, 'lnClass', origin), dataObjects: [] };
  optional(ctx, tag, origin, node, ['desc']);
  ctx.model.templates.lNodeTypes.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'LNodeType', node);
};

const dataObject: Opener = (ctx, tag, parent, origin) => {
  const node: DoDefinition = { name: need(ctx, tag, 'name', origin), type: typeName(ctx, tag, 'type', origin) };
  optional(ctx, tag, origin, node, ['desc']);
  (parent as LNodeType).dataObjects.push(node);
  ctx.reporter.place(node, origin);
  return undefined;
};

const doType: Opener = (ctx, tag, _parent, origin) => {
  const cdc = attr(ctx, tag, 'cdc', origin) ?? '';
  const node: DoType = { id: typeName(ctx, tag, 'id', origin), cdc, children: [] };
  if (!cdc) ctx.reporter.warning('DOType without cdc', origin);
  optional(ctx, tag, origin, node, ['desc']);
  ctx.model.templates.doTypes.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'DOType', node);
};

const subDataObject: Opener = (ctx, tag, parent, origin) => {
  const node: SdoDefinition = { kind: 'SDO', name: need(ctx, tag, 'name', origin), type: typeName(ctx, tag, 'type', origin) };
  optional(ctx, tag, origin, node, ['desc']);
  const count = arrayCount(ctx, tag, origin);
  if (count !== undefined) node.count = count;
  (parent as DoType).children.push(node);
  ctx.reporter.place(node, origin);
  return undefined;
};

/** Reads what DA and BDA share: name, basic type, type id, array size, and a default `Val`. */
function attributeFields(ctx: ReadContext, tag: Tag, origin: Origin): BdaDefinition {
  const node: BdaDefinition = { name: need(ctx, tag, 'name', origin), bType: need(ctx, tag, 'bType', origin) };
  const type = attr(ctx, tag, 'type', origin);
  if (type !== undefined) node.type = type;
  const count = arrayCount(ctx, tag, origin);
  if (count !== undefined) node.count = count;
  const desc = attr(ctx, tag, 'desc', origin);
  if (desc) node.desc = desc;
  return node;
}

const closeDefault: Closer = (ctx, { node }, text) => {
  (node as BdaDefinition).value ??= intern(ctx, text.trim());
};

const defaultValue: Opener = (_ctx, _tag, parent, origin) => enter(origin, 'Val', parent, closeDefault, true);

const dataAttribute: Opener = (ctx, tag, parent, origin) => {
  const node: DaDefinition = { kind: 'DA', fc: need(ctx, tag, 'fc', origin), ...attributeFields(ctx, tag, origin) };
  (parent as DoType).children.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'DA', node);
};

const daType: Opener = (ctx, tag, _parent, origin) => {
  const node: DaType = { id: typeName(ctx, tag, 'id', origin), components: [] };
  optional(ctx, tag, origin, node, ['desc']);
  ctx.model.templates.daTypes.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'DAType', node);
};

const component: Opener = (ctx, tag, parent, origin) => {
  const node = attributeFields(ctx, tag, origin);
  (parent as DaType).components.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'DA', node);
};

const enumType: Opener = (ctx, tag, _parent, origin) => {
  const node: EnumType = { id: typeName(ctx, tag, 'id', origin), values: [] };
  optional(ctx, tag, origin, node, ['desc']);
  ctx.model.templates.enumTypes.push(node);
  ctx.reporter.place(node, origin);
  return enter(origin, 'EnumType', node);
};

type EnumValueFrame = { enumType: EnumType; ord: number | undefined };

const closeEnumValue: Closer = (ctx, { node }, text) => {
  const { enumType: target, ord } = node as EnumValueFrame;
  if (ord !== undefined) target.values.push({ ord, value: intern(ctx, text.trim()) });
};

const enumValue: Opener = (ctx, tag, parent, origin) => {
  const raw = need(ctx, tag, 'ord', origin).trim();
  const ord = /^-?\d{1,9}$/.test(raw) ? Number(raw) : undefined;
  if (raw && ord === undefined) ctx.reporter.error(`EnumVal ord "${raw}" is not an integer`, origin);
  return enter(origin, 'EnumVal', { enumType: parent as EnumType, ord } satisfies EnumValueFrame, closeEnumValue, true);
};

/** The handlers of `DataTypeTemplates`, by the kind of the parent frame and the child's element name. */
export const templateOpeners: Record<string, Record<string, Opener>> = {
  SCL: { DataTypeTemplates: (_ctx, _tag, _parent, origin) => enter(origin, 'DataTypeTemplates', undefined) },
  DataTypeTemplates: { LNodeType: lNodeType, DOType: doType, DAType: daType, EnumType: enumType },
  LNodeType: { DO: dataObject },
  DOType: { SDO: subDataObject, DA: dataAttribute },
  DAType: { BDA: component },
  DA: { Val: defaultValue },
  EnumType: { EnumVal: enumValue },
};
