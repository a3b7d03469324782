import {
  Type,
  type Static,
  type TArray,
  type TNull,
  type TObject,
  type TOptional,
  type TSchema,
  type TString,
  type TUnsafe,
} from '@sinclair/typebox';
import { defineOperation, NoContent, requestSchema, type Operation } from '../operation.ts';
import type { ProblemCode } from '../problems.ts';
import type { ConfigEntity } from './events.ts';
import { duplicateName, readBinding, refusedWithChildren, writeBinding } from './http.ts';
import { NullOr } from './kinds.ts';

/*
 * One definition per configuration resource: its fields, where it sits in the API and what its operations
 * say. The request and response schemas, the five operations (list, create, read, replace, delete) and
 * the config service's table mapping (`config-service/src/store/tables.ts`) all follow from it, so a new
 * field is one line here plus its migration.
 */

/** One field: what a request may send (with its limits), what an answer shows, and whether it may be left out. */
export type Field<Q extends TSchema = TSchema, R extends TSchema = TSchema, O extends boolean = boolean> = {
  request: Q;
  response: R;
  optional: O;
};

/** A field every request must send and every answer carries. */
export function required<Q extends TSchema, R extends TSchema>(request: Q, response: R): Field<Q, R, false> {
  return { request, response, optional: false };
}

/** A field a request may leave out or send as null, and an answer omits while it is not set. */
export function optional<Q extends TSchema, R extends TSchema>(field: Field<Q, R>): Field<Q, R, true> {
  return { ...field, optional: true };
}

/** The fields of a resource, in the order the documents show them. */
export type Fields = Record<string, Field>;

type RequestProperties<F extends Fields> = {
  [K in keyof F]: F[K]['optional'] extends true ? TOptional<TUnsafe<Static<F[K]['request']> | null>> : F[K]['request'];
};
type ResponseProperties<F extends Fields> = {
  [K in keyof F]: F[K]['optional'] extends true ? TOptional<F[K]['response']> : F[K]['response'];
};

const requestRule =
  'Unknown fields are rejected (400 `validation_failed`). Optional fields may be left out or sent as `null` ' +
  'when they are not set. Lengths count Unicode characters.';
const responseRule = 'Optional fields that are not set are omitted. Audit fields are set by the service.';

const uuidPattern = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** Id of a configuration entity: a UUID the service assigns; anything else is refused with 400. */
export function ConfigIdOf(description = 'A UUID assigned by the service; answered in lower case, accepted in any case.') {
  return Type.String({ pattern: uuidPattern, description });
}

/** Id of a configuration entity, with the default description. */
export const ConfigId = ConfigIdOf();

/** Audit fields every configuration entity carries, set by the service from the caller and its clock. */
export const auditFields = {
  createdBy: Type.String({ description: 'Name of the user who created it.' }),
  creationDate: Type.String({ format: 'date-time' }),
  lastModifiedBy: Type.String({ description: 'Name of the user who changed it last.' }),
  lastModifiedDate: Type.String({ format: 'date-time' }),
};

/** The parent a resource hangs under in the path (a board under its board group). */
export type PathParent = {
  /** Its path parameter, which answers also carry as a field. */
  param: string;
  label: string;
  /** How the summaries join the two: `in` (a board in a board group) or `of` (a placeholder of a faceplate). */
  joined: 'in' | 'of';
  /** The parameter's description. */
  description: string;
};

/** The answer of a resource: id, its parent's id when it has one in the path, its fields and the audit fields. */
export type ResponseSchema<F extends Fields, P extends string> = TObject<
  { id: TString } & { [K in P]: TString } & ResponseProperties<F> & typeof auditFields
>;

/** What one resource is. */
export type ResourceSpec<F extends Fields, P extends string = never> = {
  entity: ConfigEntity;
  /** Names the operations: `Project` gives getProjects, createProject, getProject, updateProject, deleteProject. */
  stem: { one: string; many: string };
  label: string;
  plural: string;
  tags: string[];
  /** The path of the collection (`/api/projects`, `/api/dashboard/:boardGroupId/boards`). */
  path: string;
  /** The path parameter of one entity and its description. */
  id: { param: string; description: string };
  parent?: PathParent & { param: P };
  fields: F;
  /** The descriptions of the request and response schemas (the rules of each are added). */
  describe: { request: string; response: string };
  /** The reference wraps create and replace bodies as `{<name>: …, file}`, also sent as multipart. */
  bodyWrapper?: string;
  /** What still refers to it and keeps it from being deleted (`faceplates or scripts`), if anything. */
  children?: string;
  /** What create and replace say of a missing parent or referenced entity (404); a create that names one checks it. */
  missing?: { create?: string; update?: string };
  /** What each operation says, where the defaults do not. */
  docs: { list: string; get: string; create?: string; update?: string; remove?: string };
  /** A resource the reference interface does not have: every operation says it is an extension. */
  extension?: true;
};

/** The five operations of a resource, typed by its answer. */
export type ResourceOperations<R extends TSchema = TSchema> = {
  list: Operation<TObject, TArray<R>>;
  create: Operation<TObject, R>;
  get: Operation<TObject, R>;
  update: Operation<TObject, TNull>;
  remove: Operation<TObject, TNull>;
};

/** A resource with the schemas and operations that follow from its definition. */
export type Resource<F extends Fields, P extends string = never> = ResourceSpec<F, P> & {
  request: TObject<RequestProperties<F>>;
  response: ResponseSchema<F, P>;
  operations: ResourceOperations<ResponseSchema<F, P>>;
};

/** Builds a resource's schemas and operations from its definition. */
export function defineResource<F extends Fields, P extends string = never>(spec: ResourceSpec<F, P>): Resource<F, P> {
  const request = Type.Object(
    Object.fromEntries(Object.entries(spec.fields).map(([name, f]) => [name, f.optional ? Type.Optional(NullOr(f.request)) : f.request])),
    { additionalProperties: false, description: `${spec.describe.request} ${requestRule}` },
  ) as unknown as TObject<RequestProperties<F>>;
  const response = Type.Object(
    {
      id: ConfigId,
      ...(spec.parent ? { [spec.parent.param]: ConfigId } : {}),
      ...(Object.fromEntries(
        Object.entries(spec.fields).map(([name, f]) => [name, f.optional ? Type.Optional(f.response) : f.response]),
      ) as ResponseProperties<F>),
      ...auditFields,
    },
    { description: `${spec.describe.response} ${responseRule}` },
  ) as unknown as ResponseSchema<F, P>;
  return { ...spec, request, response, operations: operationsOf(spec, request, response) };
}

/** The five operations, named, bound and described by the rules every resource follows. */
function operationsOf<F extends Fields, P extends string, R extends TObject>(
  spec: ResourceSpec<F, P>,
  body: TObject,
  response: R,
): ResourceOperations<R> {
  const { stem, label, plural, tags, parent } = spec;
  const collection = spec.path;
  const one = `${collection}/:${spec.id.param}`;
  const parentParam = parent ? { [parent.param]: ConfigIdOf(parent.description) } : {};
  const listParams = Type.Object(parentParam, { additionalProperties: false });
  const oneParams = Type.Object({ ...parentParam, [spec.id.param]: ConfigIdOf(spec.id.description) }, { additionalProperties: false });
  const wrapped = spec.bodyWrapper ? { consumes: ['application/json', 'multipart/form-data'] as const, bodyWrapper: spec.bodyWrapper } : {};
  const checksParent = parent !== undefined || spec.missing?.create !== undefined;
  const sentence = (...parts: (string | undefined)[]) => parts.filter(Boolean).join(' ');
  const common = { service: 'config' as const, tags };
  const removeErrors: ProblemCode[] = spec.children ? ['not_found', 'conflict'] : ['not_found'];

  const ops: ResourceOperations<R> = {
    list: defineOperation({
      ...common,
      operationId: `get${stem.many}`,
      summary: `List the ${plural} of ${parent ? `a ${parent.label}` : 'the space'}`,
      description: spec.docs.list,
      request: requestSchema(parent ? { params: listParams } : {}),
      response: Type.Array(response),
      http: readBinding(collection, parent ? ['not_found'] : []),
    }),
    create: defineOperation({
      ...common,
      operationId: `create${stem.one}`,
      summary: `Create a ${label}${parent ? ` ${parent.joined} a ${parent.label}` : ''}`,
      description: spec.docs.create ?? sentence(`Answers the ${label}.`, spec.missing?.create, duplicateName),
      request: requestSchema(parent ? { params: listParams, body } : { body }),
      response,
      http: { ...writeBinding('POST', collection, 200, checksParent ? ['not_found', 'conflict'] : ['conflict']), ...wrapped },
    }),
    get: defineOperation({
      ...common,
      operationId: `get${stem.one}`,
      summary: `Read a ${label}`,
      description: spec.docs.get,
      request: requestSchema({ params: oneParams }),
      response,
      http: readBinding(one, ['not_found']),
    }),
    update: defineOperation({
      ...common,
      operationId: `update${stem.one}`,
      summary: `Replace a ${label}`,
      description:
        spec.docs.update ?? sentence('Replaces every field; optional fields left out are cleared.', spec.missing?.update, duplicateName),
      request: requestSchema({ params: oneParams, body }),
      response: NoContent,
      http: { ...writeBinding('PUT', one, 204, ['not_found', 'conflict']), ...wrapped },
    }),
    remove: defineOperation({
      ...common,
      operationId: `delete${stem.one}`,
      summary: `Delete a ${label}`,
      description: spec.docs.remove ?? (spec.children ? refusedWithChildren(spec.children) : undefined),
      request: requestSchema({ params: oneParams }),
      response: NoContent,
      http: writeBinding('DELETE', one, 204, removeErrors),
    }),
  };
  if (spec.extension) {
    for (const op of Object.values(ops)) op.description = sentence(op.description, extensionNote);
  }
  return ops;
}

/** What an operation of a resource the reference does not have says. */
export const extensionNote = 'An extension of the reference interface.';

/** The operations of resources in registry order: each resource's list, create, read, replace, delete. */
export function operationsOfAll(resources: readonly { operations: ResourceOperations }[]): Operation[] {
  return resources.flatMap((r) => [r.operations.list, r.operations.create, r.operations.get, r.operations.update, r.operations.remove]);
}
