import { Validator } from '@seriousme/openapi-schema-validator';
import { Type } from '@sinclair/typebox';
import { defineOperation, operations, requestSchema, NoContent, type Operation } from '@scada/contracts';
import t from 'tap';
import { buildOpenApi } from '../src/openapi.ts';

type Json = Record<string, any>;

const Board = Type.Object({ id: Type.String(), name: Type.String(), note: Type.Optional(Type.String()) });
const updateBoard = defineOperation({
  operationId: 'updateSampleBoard',
  service: 'config',
  summary: 'Replace a board',
  description: 'Replaces the board with the given id.',
  tags: ['Boards'],
  request: requestSchema({
    params: Type.Object({ boardId: Type.String({ pattern: '^[a-z0-9-]{1,36}$', description: 'Id of the board' }) }),
    query: Type.Object({ dryRun: Type.Optional(Type.Boolean()), revision: Type.Integer({ minimum: 0 }) }),
    body: Type.Object({ name: Type.String({ minLength: 1 }) }),
  }),
  response: Board,
  http: {
    method: 'PUT',
    path: '/api/boards/:boardId',
    status: 200,
    access: 'editor',
    spaceScoped: true,
    consumes: ['application/json', 'application/x-www-form-urlencoded'],
    errors: ['conflict'],
  },
});
const deleteBoard = defineOperation({
  operationId: 'deleteSampleBoard',
  service: 'config',
  summary: 'Delete a board',
  tags: ['Boards'],
  request: requestSchema({ params: Type.Object({ boardId: Type.String() }) }),
  response: NoContent,
  http: { method: 'DELETE', path: '/api/boards/:boardId', status: 204, access: 'admin', spaceScoped: true },
});
const sample: readonly Operation[] = [...operations, updateBoard, deleteBoard];

function operationAt(doc: Json, method: string, path: string): Json {
  return doc.paths[path][method];
}

t.test('the document is OpenAPI 3.1.0 at the contract version, plain JSON', async (t) => {
  const doc = buildOpenApi(operations, { serverUrls: ['https://scada.example:8082'] }) as Json;

  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.title, 'SCADA platform API');
  t.equal(doc.info.version, '20260422-7');
  t.match(doc.info.description, /Optional fields that are not set are omitted from responses/);
  t.same(doc.servers, [{ url: 'https://scada.example:8082' }]);
  t.same(JSON.parse(JSON.stringify(doc)), doc, 'survives a JSON round trip unchanged');
  t.equal(Object.getOwnPropertySymbols(operationAt(doc, 'get', '/api/echo').responses['200'].content['application/json'].schema).length, 0);
});

t.test('every registry operation with an HTTP binding appears once under its operationId', async (t) => {
  const doc = buildOpenApi(operations, {}) as Json;
  const ids = Object.values(doc.paths as Json).flatMap((item) => Object.values(item as Json).map((op) => (op as Json).operationId));

  for (const op of operations.filter((o) => o.http)) {
    const path = op.http!.path.replace(/:(\w+)/g, '{$1}');
    t.equal(operationAt(doc, op.http!.method.toLowerCase(), path)?.operationId, op.operationId, op.operationId);
  }
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  t.same(
    (doc.servers as Json[]).map((s) => s.url),
    ['/'],
    'without server URLs, the server that served the document (a relative URL)',
  );
});

t.test('the operational endpoints are documented under Operations without a login', async (t) => {
  const doc = buildOpenApi(operations, {}) as Json;

  for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs']) {
    const op = operationAt(doc, 'get', path);
    t.same(op.tags, ['Operations'], path);
    t.notOk(op.security, `${path} needs no login`);
  }
  t.ok(operationAt(doc, 'get', '/readyz').responses['503']);
});

t.test('path, query and X-Space parameters come from the request schema', async (t) => {
  const doc = buildOpenApi(sample, {}) as Json;
  const op = operationAt(doc, 'put', '/api/boards/{boardId}');

  t.notOk(doc.paths['/api/boards/:boardId'], 'Koa parameters are converted');
  t.same(
    op.parameters.map((p: Json) => [p.name, p.in, p.required]),
    [
      ['boardId', 'path', true],
      ['dryRun', 'query', false],
      ['revision', 'query', true],
      ['X-Space', 'header', false],
    ],
  );
  t.same(op.parameters[0].schema, { type: 'string', pattern: '^[a-z0-9-]{1,36}$', description: 'Id of the board' });
  t.equal(op.parameters[0].description, 'Id of the board');
  t.same(op.parameters[2].schema, { type: 'integer', minimum: 0 });
  t.same(op.parameters[3].schema, { type: 'string', minLength: 1, maxLength: 64 });
  t.same(
    operationAt(doc, 'get', '/api/echo').parameters.map((p: Json) => p.name),
    ['text'],
    'no X-Space unless space-scoped',
  );
});

t.test('the body is documented for each accepted content type and the answer by its status', async (t) => {
  const doc = buildOpenApi(sample, {}) as Json;
  const update = operationAt(doc, 'put', '/api/boards/{boardId}');
  const remove = operationAt(doc, 'delete', '/api/boards/{boardId}');

  t.same(Object.keys(update.requestBody.content), ['application/json', 'application/x-www-form-urlencoded']);
  t.equal(update.requestBody.required, true);
  t.same(update.requestBody.content['application/json'].schema.required, ['name']);
  t.same(update.responses['200'].content['application/json'].schema.required, ['id', 'name'], 'optional fields are not required');
  t.notOk(remove.responses['204'].content, 'a 204 has no content');
  t.notOk(remove.requestBody);
});

t.test('problem responses follow the shape of each operation', async (t) => {
  const doc = buildOpenApi(sample, {}) as Json;
  const statuses = (op: Json) => Object.keys(op.responses).filter((s) => Number(s) >= 400);
  const update = operationAt(doc, 'put', '/api/boards/{boardId}');
  const echo = operationAt(doc, 'get', '/api/echo');

  t.same(statuses(update), ['400', '401', '403', '404', '409', '413', '415', '429', '500', '503', '504']);
  t.same(statuses(echo), ['400', '403', '429', '500', '503', '504'], 'a public operation has no 401; its 403 is the IP filter');
  t.match(update.responses['409'].description, /`conflict`/, 'codes listed in http.errors appear');
  t.match(update.responses['403'].description, /`space_forbidden`/);
  t.match(update.responses['400'].description, /`validation_failed`/);
  // A service's store refuses work past its queue's bound at once: any operation that reaches a service may answer it.
  t.match(update.responses['503'].description, /`overloaded`/, "a store's full queue is a 503 of every operation");
  t.match(echo.responses['503'].description, /`service_unavailable`/);
  t.same(update.responses['404'].content, { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } });
  t.ok(update.responses['429'].headers['Retry-After']);
  t.same(doc.components.schemas.Problem.required, ['type', 'title', 'status', 'detail', 'code']);
  t.same(Object.keys(doc.components.schemas.Problem.properties.errors.items.properties), ['path', 'message']);
});

t.test('operations that need a login accept a bearer token or the session cookie', async (t) => {
  const doc = buildOpenApi(sample, {}) as Json;

  t.same(operationAt(doc, 'put', '/api/boards/{boardId}').security, [{ bearerAuth: [] }, { cookieAuth: [] }]);
  t.notOk(operationAt(doc, 'get', '/api/echo').security, 'a public operation has none');
  t.same(doc.components.securitySchemes, {
    bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    cookieAuth: { type: 'apiKey', in: 'cookie', name: 'svc_access_token' },
  });
});

t.test('a duplicate operationId or route among bound operations is refused', async (t) => {
  const twin = { ...updateBoard, http: { ...updateBoard.http, path: '/api/other/:boardId' } } as Operation;

  const sameRoute = { ...deleteBoard, operationId: 'removeSampleBoard' } as Operation;

  t.throws(() => buildOpenApi([updateBoard, twin], {}), /updateSampleBoard is used twice/);
  t.throws(() => buildOpenApi([deleteBoard, sameRoute], {}), /DELETE \/api\/boards\/:boardId is bound twice/);
});

t.test('the document passes an OpenAPI 3.1 schema validator', async (t) => {
  for (const ops of [operations, sample]) {
    const result = await new Validator().validate(buildOpenApi(ops, { serverUrls: ['/'] }));

    t.equal(result.valid, true, JSON.stringify(result.errors));
  }
});

t.test('the connection part of the SCL uploads is a component, referenced by both upload operations', async (t) => {
  const doc = buildOpenApi(operations, {}) as { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };
  const schema = doc.components.schemas.ConnectionRequest;
  t.same(schema.required, ['name', 'ip', 'port', 'projectId', 'protocol']);
  t.equal(schema.additionalProperties, false);
  for (const [path, method] of [
    ['/api/protocols/iec61850/connections/with-file', 'post'],
    ['/api/protocols/iec61850/connections/{connectionId}/with-file', 'put'],
  ] as const) {
    const part = doc.paths[path]![method].requestBody.content['multipart/form-data'].schema.properties.connection;
    t.match(
      part,
      { type: 'string', contentMediaType: 'application/json', contentSchema: { $ref: '#/components/schemas/ConnectionRequest' } },
      `${method} ${path}`,
    );
  }
});
