import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { EntityName, noNulPattern, NullOr, OneOf, UnicodeText } from './kinds.ts';

/*
 * Messages of the config service, with the fields, enums and limits of the reference interface
 * (ProjectRequestDto, DashboardGroupRequestDto, DashboardRequestDto, FaceplateRequestDto,
 * FaceplatePlaceholderRequestDto, RepeatableScriptRequestDto and their response forms).
 */

const uuidPattern = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** Id of a configuration entity: a UUID the service assigns; anything else is refused with 400. */
export function ConfigIdOf(description = 'A UUID assigned by the service; answered in lower case, accepted in any case.') {
  return Type.String({ pattern: uuidPattern, description });
}

/** Id of a configuration entity, with the default description. */
export const ConfigId = ConfigIdOf();

/** Description of a reference to a project. */
const projectRef = 'Id of a project of the same space; a missing project, or one of another space, is 404.';

const int32Max = 2 ** 31 - 1;

/** A 32-bit integer, at least `minimum` (default -2^31). */
function Int32(minimum = -(2 ** 31)): TSchema {
  return Type.Integer({ format: 'int32', minimum, maximum: int32Max });
}

/** An optional request field: left out, or null, when it is not set. */
function optional<S extends TSchema>(schema: S) {
  return Type.Optional(NullOr(schema));
}

/** Free text of at most `max` characters. */
function Note(max: number) {
  return UnicodeText({ maxLength: max, pattern: noNulPattern });
}

const requestRule =
  'Unknown fields are rejected (400 `validation_failed`). Optional fields may be left out or sent as `null` ' +
  'when they are not set. Lengths count Unicode characters.';
const responseRule = 'Optional fields that are not set are omitted. Audit fields are set by the service.';

/** Audit fields every configuration entity carries, set by the service from the caller and its clock. */
const Audit = {
  createdBy: Type.String({ description: 'Name of the user who created it.' }),
  creationDate: Type.String({ format: 'date-time' }),
  lastModifiedBy: Type.String({ description: 'Name of the user who changed it last.' }),
  lastModifiedDate: Type.String({ format: 'date-time' }),
};

/** Body of createProject and updateProject. */
export const ProjectRequest = Type.Object(
  {
    name: EntityName('Unique among the projects of the space (compared exactly).'),
    isActive: Type.Boolean(),
    dsc: optional(Note(255)),
    address: optional(Note(255)),
    longitude: optional(Type.Number({ format: 'double' })),
    latitude: optional(Type.Number({ format: 'double' })),
    iconFileId: optional(Note(36)),
    properties: optional(Note(32767)),
  },
  { additionalProperties: false, description: `A project of the space. ${requestRule}` },
);
export type ProjectRequest = Static<typeof ProjectRequest>;

/** A project. */
export const ProjectResponse = Type.Object(
  {
    id: ConfigId,
    name: Type.String(),
    isActive: Type.Boolean(),
    dsc: Type.Optional(Type.String()),
    address: Type.Optional(Type.String()),
    longitude: Type.Optional(Type.Number({ format: 'double' })),
    latitude: Type.Optional(Type.Number({ format: 'double' })),
    iconFileId: Type.Optional(Type.String()),
    properties: Type.Optional(Type.String()),
    ...Audit,
  },
  { description: `A project. ${responseRule}` },
);
export type ProjectResponse = Static<typeof ProjectResponse>;

/** Body of createBoardGroup and updateBoardGroup. */
export const BoardGroupRequest = Type.Object(
  {
    name: EntityName('Unique among the board groups of the space (compared exactly).'),
    color: optional(UnicodeText({ maxLength: 7, format: 'color', description: 'A colour as `#rrggbb`.' })),
    rank: optional(Int32(0)),
  },
  { additionalProperties: false, description: `A dashboard board group. ${requestRule}` },
);
export type BoardGroupRequest = Static<typeof BoardGroupRequest>;

/** A board group. */
export const BoardGroupResponse = Type.Object(
  {
    id: ConfigId,
    name: Type.String(),
    color: Type.Optional(Type.String()),
    rank: Type.Optional(Type.Integer({ format: 'int32' })),
    ...Audit,
  },
  { description: `A dashboard board group. ${responseRule}` },
);
export type BoardGroupResponse = Static<typeof BoardGroupResponse>;

/** Kinds of board. */
export const BoardType = OneOf(['Animation', 'Html', 'Iframe']);

/** Body of createBoard and updateBoard. */
export const BoardRequest = Type.Object(
  {
    name: EntityName('Unique among the boards of its group (compared exactly).'),
    type: BoardType,
    header: Type.Boolean(),
    x: optional(Int32(0)),
    y: optional(Int32(0)),
    width: optional(Int32(1)),
    height: optional(Int32(1)),
    iframeUrl: optional(UnicodeText({ maxLength: 2048, format: 'http-url', description: 'An absolute `http:` or `https:` URL.' })),
    animationParams: optional(Note(32767)),
    animationId: optional(Note(36)),
    customHtmlId: optional(Note(36)),
  },
  { additionalProperties: false, description: `A dashboard board. ${requestRule}` },
);
export type BoardRequest = Static<typeof BoardRequest>;

/** A board of a board group. */
export const BoardResponse = Type.Object(
  {
    id: ConfigId,
    boardGroupId: ConfigId,
    name: Type.String(),
    type: BoardType,
    header: Type.Boolean(),
    x: Type.Optional(Type.Integer({ format: 'int32' })),
    y: Type.Optional(Type.Integer({ format: 'int32' })),
    width: Type.Optional(Type.Integer({ format: 'int32' })),
    height: Type.Optional(Type.Integer({ format: 'int32' })),
    iframeUrl: Type.Optional(Type.String()),
    animationParams: Type.Optional(Type.String()),
    animationId: Type.Optional(Type.String()),
    customHtmlId: Type.Optional(Type.String()),
    ...Audit,
  },
  { description: `A dashboard board. ${responseRule}` },
);
export type BoardResponse = Static<typeof BoardResponse>;

/** Body of createFaceplate and updateFaceplate. */
export const FaceplateRequest = Type.Object(
  {
    name: EntityName('Unique among the faceplates of its project (compared exactly).'),
    projectId: ConfigIdOf(projectRef),
    color: optional(UnicodeText({ maxLength: 7, format: 'color', description: 'A colour as `#rrggbb`.' })),
    dsc: optional(Note(255)),
    svgFileId: optional(Note(36)),
  },
  { additionalProperties: false, description: `A faceplate. ${requestRule}` },
);
export type FaceplateRequest = Static<typeof FaceplateRequest>;

/** A faceplate. */
export const FaceplateResponse = Type.Object(
  {
    id: ConfigId,
    projectId: ConfigId,
    name: Type.String(),
    color: Type.Optional(Type.String()),
    dsc: Type.Optional(Type.String()),
    svgFileId: Type.Optional(Type.String()),
    ...Audit,
  },
  { description: `A faceplate. ${responseRule}` },
);
export type FaceplateResponse = Static<typeof FaceplateResponse>;

/** Kinds of placeholder. */
export const PlaceholderType = OneOf(['number', 'text', 'tag', 'combo', 'color', 'animation']);

/** Body of createFaceplatePlaceholder and updateFaceplatePlaceholder. */
export const PlaceholderRequest = Type.Object(
  {
    name: EntityName('Unique among the placeholders of its faceplate (compared exactly).'),
    type: PlaceholderType,
    dsc: optional(Note(255)),
    order: optional(Int32()),
    group: optional(Note(100)),
    props: optional(Note(32767)),
  },
  { additionalProperties: false, description: `A placeholder of a faceplate. ${requestRule}` },
);
export type PlaceholderRequest = Static<typeof PlaceholderRequest>;

/** A placeholder of a faceplate. */
export const PlaceholderResponse = Type.Object(
  {
    id: ConfigId,
    faceplateId: ConfigId,
    name: Type.String(),
    type: PlaceholderType,
    dsc: Type.Optional(Type.String()),
    order: Type.Optional(Type.Integer({ format: 'int32' })),
    group: Type.Optional(Type.String()),
    props: Type.Optional(Type.String()),
    ...Audit,
  },
  { description: `A placeholder of a faceplate. ${responseRule}` },
);
export type PlaceholderResponse = Static<typeof PlaceholderResponse>;

/** Kinds of script schedule. */
export const ScriptType = OneOf(['Periodic', 'Daily', 'Once', 'None']);

/** Longest script, in Unicode characters. */
export const maxScriptCharacters = 65535;

/** The code of a script: any Unicode text, NUL included, kept byte for byte. */
export const ScriptCode = UnicodeText({
  maxLength: maxScriptCharacters,
  description: `Source code: at most ${maxScriptCharacters} Unicode characters; empty is allowed; kept byte for byte.`,
});

/** Body of createScript and updateScript. */
export const ScriptRequest = Type.Object(
  {
    name: EntityName('Unique among the scripts of its project (compared exactly).'),
    projectId: ConfigIdOf(projectRef),
    type: ScriptType,
    log: Type.Boolean(),
    code: ScriptCode,
    time: optional(Type.String({ format: 'date-time' })),
    delay: optional(Int32(0)),
    period: optional(Int32(100)),
    dsc: optional(Note(255)),
  },
  { additionalProperties: false, description: `A repeatable script. ${requestRule}` },
);
export type ScriptRequest = Static<typeof ScriptRequest>;

/** A script. */
export const ScriptResponse = Type.Object(
  {
    id: ConfigId,
    projectId: ConfigId,
    name: Type.String(),
    type: ScriptType,
    log: Type.Boolean(),
    code: Type.String(),
    time: Type.Optional(Type.String({ format: 'date-time' })),
    delay: Type.Optional(Type.Integer({ format: 'int32' })),
    period: Type.Optional(Type.Integer({ format: 'int32' })),
    dsc: Type.Optional(Type.String()),
    ...Audit,
  },
  { description: `A repeatable script. ${responseRule}` },
);
export type ScriptResponse = Static<typeof ScriptResponse>;
