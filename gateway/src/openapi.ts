import {
  apiVersion,
  ConnectionRequest,
  NoContent,
  problemCodes,
  type HttpBinding,
  type Operation,
  type ProblemCode,
} from '@scada/contracts';

import { sessionPaths } from './openapi_sessions.ts';
import { livePaths, liveSchemas } from './live/openapi.ts';

type Json = Record<string, unknown>;

const problemRef = '#/components/schemas/Problem';
const anyAccess = [{ bearerAuth: [] }, { cookieAuth: [] }];

const description = [
  'REST API of the multi-tenant SCADA platform.',
  '',
  '- Optional fields that are not set are omitted from responses rather than sent as `null`; a field that',
  '  can be `null` says so in its schema.',
  '- Errors are RFC 9457 problem details (`application/problem+json`) with a stable snake_case `code`;',
  '  validation failures list each failed check in `errors`.',
  '- Every response carries `X-Request-Id` and `X-Content-Type-Options: nosniff`; over HTTPS',
  '  `Strict-Transport-Security`; every API answer `Cache-Control: no-store`.',
  '- Refused at the edge, never a 500: U+0000 or an unpaired surrogate in any string of path, query or body',
  '  (400 `validation_failed`); a body that is not UTF-8 or not JSON (400 `malformed_body`); nesting deeper',
  '  than 64 levels (400); a `Content-Encoding` other than identity, gzip or deflate (415) or a body that',
  '  does not decode under it (400); a multipart file part where the operation takes no file (400).',
  '- A request body is at most 1 MiB (413 `payload_too_large` past it), unless its operation says otherwise',
  '  (an animation: 6 MiB, for its SVG of up to 2 MiB; an SCL upload: `MAX_SCL_BYTES`).',
  "- A multipart part of type `application/json` is text even with a file name (a browser's FormData with",
  '  a JSON Blob): the `connection` part of the SCL uploads may come either way.',
  "- Each operation has a deadline (device operations 30 s, animations 15 s, the rest the platform's standard one); past it",
  '  the answer is 504 `upstream_timeout`.',
  "- Space-scoped operations take the space from the `X-Space` header, else the caller's default space.",
].join('\n');

/**
 * Builds the OpenAPI 3.1 document of the gateway from the operation registry: every operation with an
 * HTTP binding, its parameters, body and answers taken from the same schemas that validate requests, plus
 * the operational endpoints. The result is plain JSON (TypeBox's symbol keys are dropped).
 */
export function buildOpenApi(ops: readonly Operation[], options: { serverUrls?: string[] }): Record<string, unknown> {
  const paths: Record<string, Json> = { ...operationalPaths(), ...sessionPaths(), ...livePaths() };
  const seen = new Set(Object.values(paths).flatMap((item) => Object.values(item).map((o) => String((o as Json).operationId))));
  for (const op of ops) {
    if (!op.http) continue;
    const item = (paths[toOpenApiPath(op.http.path)] ??= {});
    const method = op.http.method.toLowerCase();
    // Both would make the document invalid; the registry is wrong, and a test says so before a release does.
    if (seen.has(op.operationId)) throw new Error(`OpenAPI: operationId ${op.operationId} is used twice`);
    if (item[method]) throw new Error(`OpenAPI: ${op.http.method} ${op.http.path} is bound twice`);
    seen.add(op.operationId);
    item[method] = operationObject(op, op.http);
  }
  const document = {
    openapi: '3.1.0',
    info: { title: 'SCADA platform API', version: apiVersion, description, contact },
    // Without configured addresses, the server that served the document (a relative URL).
    servers:
      options.serverUrls && options.serverUrls.length > 0
        ? options.serverUrls.map((url) => ({ url }))
        : [{ url: '/', description: 'The gateway that served this document' }],
    tags: tagsOf(ops, paths),
    paths,
    components: components(),
  };
  return JSON.parse(JSON.stringify(document)) as Record<string, unknown>;
}

/** Koa's `/a/:id` as OpenAPI's `/a/{id}`. */
function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z_$][\w$]*)/g, '{$1}');
}

/** Who answers for the API. */
const contact = { name: 'SCADA platform maintainers' };

/** The conditional-read header of a cacheable read. */
const ifNoneMatch: Json = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'The `ETag` of an earlier answer: 304 without content while the answer is still the same.',
  schema: { type: 'string' },
};

/** The Operation Object of one bound operation. */
function operationObject(op: Operation, http: HttpBinding): Json {
  const parts = op.request.properties as Record<string, Json | undefined>;
  const body = (http.documentedBody as Json | undefined) ?? parts.body;
  return {
    operationId: op.operationId,
    summary: op.summary,
    description: [op.description, accessNote(http)].filter(Boolean).join('\n\n'),
    tags: [...op.tags],
    ...(http.access === 'public' ? {} : { security: anyAccess }),
    parameters: [...parametersOf(op, http), ...(http.cacheable ? [ifNoneMatch] : [])],
    ...(body ? { requestBody: requestBodyOf(body, op.request.required?.includes('body') ?? false, http) } : {}),
    responses: { ...successOf(op, http), ...problemResponses(errorCodesOf(op, http)) },
  };
}

/** Who may call an operation, in words. */
function accessNote(http: HttpBinding): string {
  if (http.access === 'public') return 'No login needed.';
  if (http.access === 'user') return 'Needs a signed-in user.';
  return `Needs the \`${http.access}\` role or a higher one.`;
}

/** Path, query and `X-Space` header parameters. */
function parametersOf(op: Operation, http: HttpBinding): Json[] {
  const parts = op.request.properties as Record<string, Json | undefined>;
  const pathNames = [...http.path.matchAll(/:([A-Za-z_$][\w$]*)/g)].map((m) => m[1] as string);
  const pathSchemas = propertiesOf(parts.params);
  const parameters: Json[] = pathNames.map((name) => parameter(name, 'path', pathSchemas[name] ?? { type: 'string' }, true));
  const query = parts.query;
  const required = new Set((query?.required as string[] | undefined) ?? []);
  for (const [name, schema] of Object.entries(propertiesOf(query))) {
    parameters.push(parameter(name, 'query', schema, required.has(name)));
  }
  if (http.spaceScoped) {
    parameters.push({
      name: 'X-Space',
      in: 'header',
      required: false,
      description: "Id of the space the request works in; the caller's default space when absent.",
      schema: { type: 'string', minLength: 1, maxLength: 64 },
    });
  }
  return parameters;
}

/** One Parameter Object; a schema's description becomes the parameter's. */
function parameter(name: string, location: 'path' | 'query', schema: Json, required: boolean): Json {
  const text = typeof schema.description === 'string' ? { description: schema.description } : {};
  return { name, in: location, required, ...text, schema };
}

/** The properties of an object schema, or none. */
function propertiesOf(schema: Json | undefined): Record<string, Json> {
  return (schema?.properties as Record<string, Json> | undefined) ?? {};
}

/** The Request Body Object: the body schema under every content type the operation accepts. */
function requestBodyOf(schema: Json, required: boolean, http: HttpBinding): Json {
  const types = http.consumes && http.consumes.length > 0 ? http.consumes : ['application/json'];
  const wrapper = http.bodyWrapper;
  const limit = http.bodyLimitBytes;
  // The standard 1 MiB bound is said once, in the document's description; a route with its own says it here.
  const sized = limit ? { description: `At most ${limit} bytes (${limit / 1024 / 1024} MiB); a larger body is 413.` } : {};
  if (!wrapper) return { ...sized, required, content: Object.fromEntries(types.map((type) => [type, { schema }])) };
  // The reference's wrapped form is accepted too: as JSON, and as a form whose part is JSON text.
  const wrapped = { type: 'object', required: [wrapper], properties: { [wrapper]: schema }, additionalProperties: false };
  const form = { type: 'object', required: [wrapper], properties: { [wrapper]: { type: 'string', contentMediaType: 'application/json' } } };
  return {
    ...sized,
    required,
    content: Object.fromEntries(
      types.map((type) => [type, { schema: type === 'multipart/form-data' ? form : { oneOf: [schema, wrapped] } }]),
    ),
  };
}

/** The success answer: JSON of the response schema, or nothing for 204. */
function successOf(op: Operation, http: HttpBinding): Record<string, Json> {
  const headers = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
  if (http.status === 204) return { '204': { description: 'Done; no content', headers } };
  if (op.response === NoContent) return { [String(http.status)]: { description: 'Done; no content', headers } };
  const text = http.status === 201 ? 'Created' : 'OK';
  const type = http.produces ?? 'application/json';
  // A trend is also streamed as CSV (`format=csv`): every recorded value of the period.
  const csv =
    http.gatewayRoute === 'history'
      ? {
          'text/csv': {
            schema: {
              type: 'string',
              description:
                "With `format=csv`: `t,receivedAt,timestamp,value,validity,quality,rcb,seqNum`, one recorded value a line in the order of the time axis (`t`: the device's time when it carries one, else the time of receipt).",
            },
          },
        }
      : {};
  if (!http.cacheable)
    return { [String(http.status)]: { description: text, headers, content: { [type]: { schema: op.response }, ...csv } } };
  const tagged = { ...headers, ETag: { description: 'Tag of this answer, for `If-None-Match`.', schema: { type: 'string' } } };
  return {
    [String(http.status)]: { description: text, headers: tagged, content: { [type]: { schema: op.response } } },
    '304': { description: 'Not modified: the answer still has the tag sent in `If-None-Match`; no content.', headers: tagged },
  };
}

/** The problem codes an operation can answer: those every route shares, by its shape, and its own. */
function errorCodesOf(op: Operation, http: HttpBinding): ProblemCode[] {
  const parts = op.request.properties as Record<string, Json | undefined>;
  const hasBody = parts.body !== undefined;
  const hasInput = hasBody || Object.keys(propertiesOf(parts.params)).length > 0 || Object.keys(propertiesOf(parts.query)).length > 0;
  const codes: ProblemCode[] = [];
  if (hasInput) codes.push('validation_failed');
  if (hasBody) codes.push('malformed_body', 'payload_too_large', 'unsupported_media_type');
  if (http.access !== 'public') codes.push('unauthenticated', 'invalid_token', 'forbidden');
  if (http.access !== 'public' && !http.beforePasswordChange) codes.push('password_change_required');
  if (http.access !== 'public' && http.method !== 'GET') codes.push('csrf_rejected');
  if (http.spaceScoped) codes.push('bad_header', 'space_forbidden');
  if (http.path.includes(':')) codes.push('not_found');
  // `overloaded`: a service's embedded store refuses work past the bound of its queue at once (503 with Retry-After).
  codes.push('ip_denied', 'rate_limited', 'internal_error', 'service_unavailable', 'overloaded', 'upstream_timeout');
  return [...new Set([...codes, ...(http.errors ?? [])])];
}

/** One problem response per status, its description naming the codes it can carry. */
function problemResponses(codes: readonly ProblemCode[]): Record<string, Json> {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of codes) {
    const status = problemCodes[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
    if ([423, 429, 503].includes(status)) headers['Retry-After'] = { $ref: '#/components/headers/RetryAfter' };
    responses[String(status)] = {
      description: list.map((code) => `${problemCodes[code].title} (\`${code}\`)`).join('; '),
      headers,
      content: { 'application/problem+json': { schema: { $ref: problemRef } } },
    };
  }
  return responses;
}

/** The tags in order of first use, with `Operations` always present. */
function tagsOf(ops: readonly Operation[], paths: Record<string, Json>): Json[] {
  const names = new Set<string>();
  for (const op of ops) if (op.http) for (const tag of op.tags) names.add(tag);
  // The gateway's own paths (sessions, the live channel) name tags of their own.
  for (const item of Object.values(paths))
    for (const o of Object.values(item) as Json[]) for (const tag of (o.tags as string[] | undefined) ?? []) names.add(tag);
  names.add('Operations');
  return [...names].map((name) => (name === 'Operations' ? { name, description: 'Health, metrics and this reference' } : { name }));
}

/** The endpoints of the gateway itself; none needs a login. */
function operationalPaths(): Record<string, Json> {
  const text = (type: string, schema: Json) => ({ content: { [type]: { schema } } });
  const status = (value: string) => ({ type: 'object', required: ['status'], properties: { status: { const: value } } });
  const answer = (desc: string, body: Json, extra: Record<string, Json> = {}) => ({
    tags: ['Operations'],
    responses: { '200': { description: desc, ...body }, ...extra },
  });
  const filtered = problemResponses(['ip_denied']);
  const notReady = problemResponses(['service_unavailable']);
  return {
    '/healthz': {
      get: {
        operationId: 'getHealth',
        summary: 'Liveness of the gateway',
        description:
          'Answers 200 while the gateway process runs, whatever its dependencies do: a probe for restarting it, not for routing to it.',
        ...answer('The gateway is alive', text('application/json', status('ok'))),
      },
    },
    '/readyz': {
      get: {
        operationId: 'getReadiness',
        summary: "Readiness of this process, with every service's live replicas",
        description:
          'Ready when this process can do its own work: it is not shutting down, its bus is connected, and its store answers when it runs services. ' +
          "Another service without replicas never makes it unready (that service's own requests answer 503); the body lists the live replicas of every service either way.",
        ...answer('Ready', text('application/json', readyBody()), notReady),
      },
    },
    '/metrics': {
      get: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        description:
          "This process's metrics in Prometheus' text format: requests by route and status, their durations, the bus, the live channel and the runtime's own, among them the event loop's delay as a histogram counted since the process started (`event_loop_delay_seconds`), for a quantile over any period.",
        ...answer('Prometheus text exposition', text('text/plain', { type: 'string' }), filtered),
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'getOpenApi',
        summary: 'This OpenAPI document',
        description: 'The OpenAPI 3.1 description of every operation, generated from the schemas that validate the requests.',
        ...answer('OpenAPI 3.1 document', text('application/json', { type: 'object' }), filtered),
      },
    },
    '/docs': {
      get: {
        operationId: 'getDocs',
        summary: 'API reference page',
        description: 'A readable page of this reference, drawn from `/openapi.json`.',
        ...answer('HTML page', text('text/html', { type: 'string' }), filtered),
      },
    },
    '/': {
      get: {
        operationId: 'getRoot',
        summary: 'Leads to the API reference page',
        description: 'Redirects to `/docs` (to the console when it is built).',
        tags: ['Operations'],
        responses: { '302': { description: 'Redirect to `/docs`', headers: { Location: { schema: { const: '/docs' } } } }, ...filtered },
      },
    },
  };
}

/** The body of a ready answer: `status` and the live replicas of each service. */
function readyBody(): Json {
  const replica = {
    type: 'object',
    required: ['instance', 'version', 'store'],
    properties: { instance: { type: 'string' }, version: { type: 'string' }, store: { enum: ['ok', 'down'] } },
  };
  const services = {
    type: 'object',
    properties: Object.fromEntries(['auth', 'config', 'protocol', 'history'].map((s) => [s, { type: 'array', items: replica }])),
  };
  return { type: 'object', required: ['status', 'services'], properties: { status: { const: 'ready' }, services } };
}

/** Shared schemas, headers and security schemes. */
function components(): Json {
  const text = { type: 'string' };
  return {
    schemas: {
      Problem: {
        type: 'object',
        description: 'An RFC 9457 problem detail.',
        required: ['type', 'title', 'status', 'detail', 'code'],
        properties: {
          type: { type: 'string', format: 'uri', examples: ['urn:scada:problem:validation_failed'] },
          title: text,
          status: { type: 'integer', minimum: 400, maximum: 599 },
          detail: text,
          code: { type: 'string', enum: Object.keys(problemCodes) },
          instance: text,
          errors: {
            type: 'array',
            items: { type: 'object', required: ['path', 'message'], properties: { path: text, message: text } },
          },
          retryAfter: { type: 'integer', minimum: 0, description: 'Seconds to wait, as in `Retry-After`.' },
          deviceError: {
            type: 'object',
            description:
              "`device_refused`: the device's reason. `service`: what was asked (`read`, `write`, `select`, `operate`, `cancel`, `enable-report`, …); `error`: the MMS data access error (`object-access-denied`, `object-value-invalid`, `temporarily-unavailable`, …) or `negative-command-termination`; `addCause`: the AddCause of a refused control.",
            required: ['service', 'error'],
            properties: { service: text, error: text, addCause: text },
          },
          rptIdOf: { type: 'string', description: '`rptid_conflict`: the enabled report block that already sends this RptID.' },
        },
      },
      ...liveSchemas(),
      // The `connection` part of the SCL uploads (multipart/form-data), sent as JSON text.
      ConnectionRequest: { ...ConnectionRequest, description: 'The connection of an SCL upload: the `connection` part, as JSON text.' },
    },
    headers: {
      RequestId: { description: 'Id of the request, also in every log line it caused.', schema: text },
      RetryAfter: { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 0 } },
    },
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      cookieAuth: { type: 'apiKey', in: 'cookie', name: 'svc_access_token' },
    },
  };
}
