import { Type, type Static } from '@sinclair/typebox';
import { defineOperation, requestSchema } from '../operation.ts';
import { byName, readBinding } from './http.ts';
import { EntityName, noNulPattern, OneOf, UnicodeText } from './kinds.ts';
import { ConfigId, ConfigIdOf, defineResource, operationsOfAll, optional, required } from './resource.ts';

/*
 * Animations: an SVG drawing and its bindings, what a board of type `Animation` draws. The SVG is checked
 * at save by the config service (an allow list of drawing elements and presentation attributes); the
 * bindings say which element moves with which data attribute, or with which placeholder a board fills.
 */

/** Largest SVG document, in UTF-8 bytes; a larger one is 413. */
export const maxAnimationSvgBytes = 2 * 1024 * 1024;

/** Most elements an SVG document may hold; more is 400. */
export const maxAnimationElements = 20_000;

/**
 * Largest request body of an animation's create and update: its SVG even if every character had to be
 * escaped in JSON (`\"`), and room as large again for the bindings. Other routes keep the standard 1 MiB.
 */
export const maxAnimationBodyBytes = 3 * maxAnimationSvgBytes;

/** Most bindings of one animation. */
export const maxAnimationBindings = 5_000;

/** What a binding changes on its element. */
export const BindingKind = OneOf(['text', 'fill', 'stroke', 'visibility', 'rotate', 'translate', 'blink']);

const Color = (description: string) => UnicodeText({ maxLength: 7, format: 'color', description });
const placeholderPattern = '^[A-Za-z_][A-Za-z0-9_.-]{0,99}$';

/** A placeholder's name as a binding names it and as a board's `animationParams` fills it. */
export const PlaceholderName = UnicodeText({
  minLength: 1,
  maxLength: 100,
  pattern: placeholderPattern,
  description: 'A letter or `_`, then letters, digits, `_`, `.` or `-`.',
});

/** A data attribute of a connection, as bindings and `animationParams` name one. */
export const AttributeSource = Type.Object(
  {
    connectionId: ConfigIdOf('Id of an IEC 61850 connection of the space.'),
    reference: UnicodeText({
      minLength: 1,
      maxLength: 255,
      pattern: noNulPattern,
      description: 'The data attribute, as `LD/LN.DO.DA[FC]` (as `/api/live` reports it).',
    }),
  },
  { additionalProperties: false },
);
export type AttributeSource = Static<typeof AttributeSource>;

/** One element id and what moves it. */
export const AnimationBinding = Type.Object(
  {
    elementId: UnicodeText({ minLength: 1, maxLength: 255, pattern: noNulPattern, description: 'The `id` of an element of the SVG.' }),
    source: Type.Union(
      [
        AttributeSource,
        Type.Object(
          { placeholder: PlaceholderName },
          { additionalProperties: false, description: 'A placeholder of the animation, filled per board by `animationParams`.' },
        ),
      ],
      { description: 'A data attribute of a connection, or a placeholder (`{placeholder: "breaker"}`) the animation lists.' },
    ),
    kind: BindingKind,
    format: Type.Optional(
      UnicodeText({
        maxLength: 8,
        pattern: '^0(\\.0{1,6})?$',
        description: '`text`: decimals shown, as `0`, `0.0`, `0.00` … (six at most); the value as it comes when left out.',
      }),
    ),
    unit: Type.Optional(UnicodeText({ maxLength: 20, pattern: noNulPattern, description: '`text`: written after the value.' })),
    thresholds: Type.Optional(
      Type.Array(Type.Object({ at: Type.Number(), color: Color('The colour from this value up.') }, { additionalProperties: false }), {
        maxItems: 20,
        description: '`fill`/`stroke`: the colour of the highest `at` the value reaches.',
      }),
    ),
    colors: Type.Optional(
      Type.Record(Type.String({ maxLength: 100 }), Color('The colour for this value.'), {
        maxProperties: 50,
        description: '`fill`/`stroke`: a colour per value as text (`true`, `2`, `on`); it wins over `thresholds`.',
      }),
    ),
    range: Type.Optional(
      Type.Object(
        {
          // Pairs as arrays of two: OpenAPI 3.1 has no tuple `items` array (its `prefixItems` TypeBox does not write).
          in: Type.Array(Type.Number(), { minItems: 2, maxItems: 2, description: 'The value range: from, to.' }),
          out: Type.Array(Type.Number(), {
            minItems: 2,
            maxItems: 2,
            description: 'Degrees (`rotate`) or user units along x (`translate`): from, to.',
          }),
        },
        { additionalProperties: false, description: '`rotate`/`translate`: the value scaled linearly from `in` to `out`, clamped.' },
      ),
    ),
    action: Type.Optional(
      OneOf(['write', 'control'], {
        description:
          'What clicking the element offers an operator (never a viewer): `write` the bound attribute, or `control` the ' +
          'control object it belongs to (`LD/LN.DO` of `LD/LN.DO.stVal[ST]`), in the dialog the model tree opens.',
      }),
    ),
    visibleWhen: Type.Optional(
      Type.Union([Type.Boolean(), Type.Number(), Type.String({ maxLength: 100 })], {
        description: '`visibility`: the element shows while the value equals this (truthy values when left out).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type AnimationBinding = Static<typeof AnimationBinding>;

const projectRef = 'Id of a project of the same space; a missing project, or one of another space, is 404.';
const missingProject = "A `projectId` that does not exist, or names another space's project, is 404.";

const svgRule =
  'The SVG is checked at save: only drawing elements and presentation attributes pass; `script`, event-handler ' +
  'attributes (`on…`), `foreignObject`, a `<!DOCTYPE`, entity references other than the predefined ones, `href` ' +
  'not starting with `#` (except `data:image/…` in `<image>`), `javascript:` anywhere, other `data:` URLs and CSS ' +
  '`url()` are 400 `validation_failed` naming the element and its line; more than ' +
  `${maxAnimationElements} elements is 400; more than ${maxAnimationSvgBytes} bytes (2 MiB, counted as UTF-8) 413, and a body ` +
  `larger than ${maxAnimationBodyBytes} bytes (6 MiB) is 413 before it is read. Each binding's \`elementId\` ` +
  "is an id of the SVG and each placeholder it names is in `placeholders` or among its faceplate's (400 otherwise). " +
  'A board fills the placeholders with its `animationParams`, a JSON object by name: a data attribute ' +
  '`{connectionId, reference}` the binding then follows, or a constant (a number, a text, a colour `#rrggbb`) it shows.';

/** Animations, each in a project of the same space. */
export const animationResource = defineResource({
  entity: 'animation',
  stem: { one: 'Animation', many: 'Animations' },
  label: 'animation',
  plural: 'animations',
  tags: ['Animations'],
  path: '/api/animations',
  id: { param: 'animationId', description: 'Id of an animation of the space (a UUID).' },
  fields: {
    name: required(EntityName('Unique among the animations of its project (compared exactly).'), Type.String()),
    projectId: required(ConfigIdOf(projectRef), ConfigId),
    dsc: optional(required(UnicodeText({ maxLength: 255, pattern: noNulPattern }), Type.String())),
    svg: required(
      UnicodeText({ minLength: 1, maxLength: 2 * maxAnimationSvgBytes, pattern: noNulPattern, description: 'The SVG document.' }),
      Type.String(),
    ),
    bindings: required(
      Type.Array(AnimationBinding, { maxItems: maxAnimationBindings, description: 'What moves which element.' }),
      Type.Array(AnimationBinding),
    ),
    placeholders: required(
      Type.Array(PlaceholderName, { maxItems: 100, uniqueItems: true, description: 'The placeholders its bindings may name.' }),
      Type.Array(Type.String()),
    ),
    faceplateId: optional(
      required(
        ConfigIdOf(
          "The faceplate this animation draws, as a symbol: its bindings may also name the faceplate's placeholders. A faceplate that does not exist, or is another space's, is 404; a faceplate an animation draws is not deleted (409).",
        ),
        ConfigId,
      ),
    ),
  },
  describe: { request: `An animation: an SVG drawing and its bindings. ${svgRule}`, response: 'An animation.' },
  extension: true,
  missing: { create: missingProject, update: missingProject },
  docs: {
    list: 'Ordered by name (Unicode code point order), then id; names are unique per project.',
    get: 'An animation of another space is 404.',
  },
});

/** The animation operations, from the animation's definition. */
export const {
  list: getAnimations,
  create: createAnimation,
  get: getAnimation,
  update: updateAnimation,
  remove: deleteAnimation,
} = animationResource.operations;

/**
 * How long a caller waits for an animation operation: an SVG of 2 MiB is checked at the gateway and in the
 * service, parsed, and staged in parts both ways (`staging.ts`), about a second on a quiet machine.
 */
export const animationDeadlineMs = 15_000;

// The create and the replace read a body of their own size; it reaches the config service staged when it is
// larger than one bus message, as an answer with such an SVG comes back.
for (const op of [createAnimation, updateAnimation]) if (op.http) op.http.bodyLimitBytes = maxAnimationBodyBytes;
for (const op of Object.values(animationResource.operations)) op.deadlineMs = animationDeadlineMs;

/** The animations of a project. */
export const getAnimationsByProject = defineOperation({
  operationId: 'getAnimationsByProject',
  service: 'config',
  summary: 'List the animations of a project',
  tags: ['Animations'],
  description: `${byName} A project that does not exist, or is another space's, is 404. An extension of the reference interface.`,
  request: requestSchema({
    query: Type.Object(
      { projectId: ConfigIdOf("A project of the space; another space's project is 404.") },
      { additionalProperties: false },
    ),
  }),
  response: Type.Array(animationResource.response),
  http: readBinding('/api/animations/by-project', ['not_found']),
  deadlineMs: animationDeadlineMs,
});

/** The animation operations. */
export const animationOperations = [...operationsOfAll([animationResource]), getAnimationsByProject];
