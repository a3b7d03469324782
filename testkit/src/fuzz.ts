/**
 * Requests for every route of the platform, generated from the operation registry's schemas and then
 * broken on purpose: wrong types, U+0000, lone surrogates, huge and deep values, unknown fields, bytes
 * that are not UTF-8, every content type and coding, files where none is taken. Used by the fuzz test
 * (fixed seed, bounded count) and by its benchmark (larger counts).
 */
import { gzipSync } from 'node:zlib';
import { operations, type Operation } from '@scada/contracts';
import fc from 'fast-check';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Record<string, unknown>;

/** One route to fuzz: its method and path template, and the schemas of its parts. */
export type FuzzRoute = {
  name: string;
  method: string;
  path: string;
  params?: Schema;
  query?: Schema;
  body?: Schema;
  /** Media types the route takes; the first is what a valid request uses. */
  consumes: readonly string[];
  /** True when the route changes state (its refusals must leave the store as it was). */
  writes: boolean;
};

/** A request ready to send. */
export type FuzzRequest = {
  route: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  mutation: string;
};

const sessionForm = (fields: string[]): Schema => ({
  type: 'object',
  required: fields,
  properties: Object.fromEntries(fields.map((f) => [f, { type: 'string', minLength: 1, maxLength: 64 }])),
});

/** Every HTTP route: the registry's operations (uploads by their documented body) and the session routes. */
export function fuzzRoutes(): FuzzRoute[] {
  const routes = operations
    .filter((op): op is Operation & { http: NonNullable<Operation['http']> } => op.http !== undefined)
    .map((op) => {
      const parts = op.request.properties as Record<string, Schema | undefined>;
      return {
        name: op.operationId,
        method: op.http.method,
        path: op.http.path,
        params: parts.params,
        query: parts.query,
        body: (op.http.documentedBody as Schema | undefined) ?? parts.body,
        consumes: op.http.consumes ?? ['application/json'],
        writes: op.http.method !== 'GET',
      };
    });
  const forms = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];
  return [
    ...routes,
    { name: 'login', method: 'POST', path: '/login', body: sessionForm(['username', 'password']), consumes: forms, writes: false },
    {
      name: 'validate',
      method: 'POST',
      path: '/validate',
      body: sessionForm(['username', 'otp_code', 'otp_token']),
      consumes: forms,
      writes: false,
    },
    { name: 'refresh', method: 'POST', path: '/refresh', body: sessionForm(['refresh_token']), consumes: forms, writes: false },
  ];
}

/** A value of a schema (the JSON Schema the registry's TypeBox schemas are). */
export function arbitraryValue(schema: Schema | undefined, depth = 0): fc.Arbitrary<Json> {
  if (!schema) return fc.constant(null);
  if ('const' in schema) return fc.constant(schema.const as Json);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as Json[]));
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Schema[]).map((s) => arbitraryValue(s, depth)));
  switch (schema.type) {
    case 'string':
      return stringOf(schema);
    case 'integer':
      return fc.integer({
        min: Math.max(Number(schema.minimum ?? -1000), -(2 ** 31)),
        max: Math.min(Number(schema.maximum ?? 100_000), 2 ** 31 - 1),
      });
    case 'number':
      return fc.double({ min: Number(schema.minimum ?? -1e6), max: Number(schema.maximum ?? 1e6), noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const max = Math.min(Number(schema.maxItems ?? 3), 3);
      return fc.array(arbitraryValue(schema.items as Schema, depth + 1), {
        minLength: Math.min(Number(schema.minItems ?? 0), max),
        maxLength: max,
      });
    }
    case 'object':
      return objectOf(schema, depth);
    default:
      return depth > 2 ? fc.constant(null) : (fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>);
  }
}

function stringOf(schema: Schema): fc.Arbitrary<Json> {
  const min = Number(schema.minLength ?? 0);
  const max = Math.min(Number(schema.maxLength ?? 40), 40);
  switch (schema.format) {
    case 'email':
      return fc.emailAddress();
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2099-12-31'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'http-url':
      return fc.webUrl({ validSchemes: ['http', 'https'] });
    case 'color':
      return fc.integer({ min: 0, max: 0xffffff }).map((n) => `#${n.toString(16).padStart(6, '0')}`);
    case 'uuid':
      return fc.uuid();
  }
  if (typeof schema.pattern === 'string' && schema.pattern !== '^[^\\u0000]*$') {
    try {
      return fc
        .stringMatching(new RegExp(schema.pattern))
        .filter((s) => s.length >= min && s.length <= Number(schema.maxLength ?? Infinity));
    } catch {
      // a pattern fast-check cannot generate from: plain text below
    }
  }
  return fc.string({ minLength: Math.min(min, max), maxLength: Math.max(min, max), unit: 'grapheme' });
}

function objectOf(schema: Schema, depth: number): fc.Arbitrary<Json> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  const record: Record<string, fc.Arbitrary<Json>> = {};
  for (const [key, s] of Object.entries(properties)) record[key] = arbitraryValue(s, depth + 1);
  const optional = Object.keys(properties).filter((k) => !required.has(k));
  return fc.record(record, { requiredKeys: [...required].filter((k) => k in properties) }).map((v) => {
    for (const k of optional) if (v[k] === undefined) delete v[k];
    return v as Json;
  });
}

/** A request as a well-behaved client would send it. */
type Plan = { params: Record<string, string>; query: Record<string, Json>; body: Json | undefined; type: string };

function planOf(route: FuzzRoute): fc.Arbitrary<Plan> {
  return fc.record({
    params: arbitraryValue(route.params).map((v) =>
      Object.fromEntries(Object.entries((v ?? {}) as Record<string, Json>).map(([k, x]) => [k, String(x)])),
    ),
    query: arbitraryValue(route.query).map((v) => (v ?? {}) as Record<string, Json>),
    body: route.body ? arbitraryValue(route.body) : fc.constant(undefined),
    type: fc.constantFrom(...route.consumes),
  });
}

const nul = '\u0000';
const lone = '\ud800';

/** The ways a request is broken; each takes a plan and answers the request to send. */
const mutations: Record<
  string,
  (route: FuzzRoute, plan: Plan, pick: fc.Arbitrary<number>) => fc.Arbitrary<Partial<Built> & { plan?: Plan }>
> = {
  valid: (_r, plan) => fc.constant({ plan }),
  'wrong type': (_r, plan) =>
    fc
      .tuple(fc.constantFrom<Json>(42, 'text', true, null, [], {}, [1, 'a']), fc.nat())
      .map(([v, n]) => ({ plan: { ...plan, body: replaceOne(plan.body, v, n) } })),
  'NUL in a string': (_r, plan) => fc.nat().map((n) => ({ plan: taint(plan, nul, n) })),
  'lone surrogate': (_r, plan) => fc.nat().map((n) => ({ plan: taint(plan, lone, n) })),
  'huge string': (_r, plan) =>
    fc
      .tuple(fc.constantFrom(70_000, 1_100_000), fc.nat())
      .map(([size, n]) => ({ plan: { ...plan, body: replaceOne(plan.body, 'x'.repeat(size), n) } })),
  'deep value': (_r, plan) =>
    fc
      .tuple(fc.constantFrom(65, 500, 5000), fc.nat())
      .map(([depth, n]) => ({ deep: depth, plan: { ...plan, body: replaceOne(plan.body, '__DEEP__', n) } })),
  'unknown fields': (_r, plan) =>
    fc
      .dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>, {
        minKeys: 1,
        maxKeys: 3,
      })
      .map((extra) => ({
        plan: { ...plan, body: isObject(plan.body) ? { ...plan.body, ...extra } : extra, query: { ...plan.query, ...extra } },
      })),
  'random bytes': (_r, plan) =>
    fc.tuple(fc.uint8Array({ maxLength: 512 }), fc.constantFrom(...mediaTypes)).map(([bytes, type]) => ({ raw: bytes, type, plan })),
  'invalid UTF-8': (_r, plan) =>
    fc.constantFrom<number[]>([0xc0, 0xaf], [0xff], [0xed, 0xa0, 0x80], [0xe2, 0x82]).map((bad) => ({ badBytes: bad, plan })),
  'another media type': (_r, plan) => fc.constantFrom(...mediaTypes).map((type) => ({ plan: { ...plan, type } })),
  'content coding': (_r, plan) =>
    fc.constantFrom('gzip', 'deflate', 'br', 'gzip, gzip', 'identity', 'x-made-up').map((coding) => ({ coding, plan })),
  'file part': (_r, plan) =>
    fc.uint8Array({ minLength: 1, maxLength: 2048 }).map((bytes) => ({ file: bytes, plan: { ...plan, type: 'multipart/form-data' } })),
  'bad path': (_r, plan) =>
    fc
      .constantFrom('%00', '%FF', '%ED%A0%80', 'x'.repeat(3000), '..%2F..', '%C0%AF', 'a%2Fb')
      .map((bad) => ({ plan: { ...plan, params: Object.fromEntries(Object.keys(plan.params).map((k) => [k, `\u0001${bad}`])) } })),
  'bad query': (_r, plan) =>
    fc.constantFrom('%00', '%FF', '%ED%A0%80', 'x'.repeat(3000), '-1', '1e400', '[]').map((bad) => ({
      rawQuery: Object.keys(plan.query)
        .concat('page')
        .map((k) => `${k}=${bad}`)
        .join('&'),
      plan,
    })),
};

const mediaTypes = [
  'application/json',
  'text/plain',
  'text/plain; charset=iso-8859-1',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'multipart/form-data; boundary=zzz',
  'application/xml',
  'application/octet-stream',
  'application/json; charset=utf-16',
  '',
];

type Built = {
  raw: Uint8Array;
  type: string;
  coding: string;
  file: Uint8Array;
  deep: number;
  badBytes: readonly number[];
  rawQuery: string;
};

/** The names of the mutations, for reports. */
export const mutationNames = Object.keys(mutations);

/** Requests for one route: a valid plan, then one mutation of it (or none, for `valid`). */
export function requestsFor(route: FuzzRoute, only?: string[]): fc.Arbitrary<FuzzRequest> {
  const names = only ?? mutationNames;
  return fc
    .tuple(planOf(route), fc.constantFrom(...names))
    .chain(([plan, name]) =>
      (mutations[name] as (typeof mutations)[string])(route, plan, fc.nat()).map((m) => build(route, name, m.plan ?? plan, m)),
    );
}

function build(route: FuzzRoute, mutation: string, plan: Plan, m: Partial<Built>): FuzzRequest {
  let path = route.path.replace(/:(\w+)/g, (_, k: string) => {
    const v = plan.params[k] ?? 'x';
    return v.startsWith('\u0001') ? v.slice(1) : encodeText(v);
  });
  const query =
    m.rawQuery ??
    Object.entries(plan.query)
      .map(([k, v]) => `${encodeText(k)}=${encodeText(typeof v === 'string' ? v : JSON.stringify(v))}`)
      .join('&');
  if (query) path += `?${query}`;
  const headers: Record<string, string> = {};
  let body: Uint8Array | undefined;
  const type = m.type ?? plan.type;
  if (m.raw) body = m.raw;
  else if (plan.body !== undefined || m.file) body = encodeBody(plan.body, type, m);
  if (body !== undefined) {
    if (type)
      headers['content-type'] =
        type.startsWith('multipart/form-data') && !type.includes('boundary') ? `multipart/form-data; boundary=${boundary}` : type;
    if (m.coding) {
      headers['content-encoding'] = m.coding;
      if (m.coding === 'gzip') body = gzipSync(body);
    }
  }
  return { route: route.name, method: route.method, path, headers, body, mutation };
}

const boundary = 'fuzzboundary7MA4YWxk';
const enc = new TextEncoder();

function encodeBody(value: Json | undefined, type: string, m: Partial<Built>): Uint8Array {
  // JSON.stringify writes a lone surrogate as its \ud800 escape: exactly what a hostile client sends.
  let json = JSON.stringify(value ?? null);
  if (m.deep) json = json.replace('"__DEEP__"', '['.repeat(m.deep) + ']'.repeat(m.deep));
  if (m.badBytes) {
    const at = json.indexOf('"');
    const bytes = enc.encode(json);
    const cut = at < 0 ? bytes.length : at + 1;
    return new Uint8Array([...bytes.subarray(0, cut), ...m.badBytes, ...bytes.subarray(cut)]);
  }
  if (type.startsWith('multipart/form-data')) {
    const parts = isObject(value)
      ? Object.entries(value).map(
          ([k, v]) =>
            `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${typeof v === 'string' ? v : JSON.stringify(v)}\r\n`,
        )
      : [];
    const head = enc.encode(parts.join(''));
    const file = m.file
      ? new Uint8Array([
          ...enc.encode(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
          ),
          ...m.file,
          ...enc.encode('\r\n'),
        ])
      : new Uint8Array();
    return new Uint8Array([...head, ...file, ...enc.encode(`--${boundary}--\r\n`)]);
  }
  if (type === 'application/x-www-form-urlencoded') {
    return enc.encode(
      isObject(value)
        ? new URLSearchParams(Object.entries(value).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString()
        : String(value),
    );
  }
  if (type.startsWith('text/plain') && typeof value === 'string') return enc.encode(value);
  return enc.encode(json);
}

/** Percent-encoding that keeps a lone surrogate as the bytes a hostile client would send for it. */
function encodeText(s: string): string {
  let out = '';
  for (const ch of s) out += /^[\ud800-\udfff]$/.test(ch) ? '%ED%A0%80' : encodeURIComponent(ch);
  return out;
}

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value with its `n`-th leaf (counting every value, depth first) replaced. */
function replaceOne(value: Json | undefined, replacement: Json, n: number): Json {
  const slots: { parent: Json[] | { [k: string]: Json }; key: string | number }[] = [];
  const walk = (v: Json) => {
    if (Array.isArray(v))
      v.forEach((x, i) => {
        slots.push({ parent: v, key: i });
        walk(x);
      });
    else if (isObject(v)) for (const [k, x] of Object.entries(v)) slots.push({ parent: v, key: k }), walk(x);
  };
  const copy = structuredClone(value ?? null) as Json;
  walk(copy);
  if (slots.length === 0) return replacement;
  const slot = slots[n % slots.length] as (typeof slots)[number];
  (slot.parent as Record<string | number, Json>)[slot.key] = replacement;
  return copy;
}

/** The plan with a character placed into its `n`-th string (body, query or path). */
function taint(plan: Plan, char: string, n: number): Plan {
  const strings: (() => void)[] = [];
  const copy = structuredClone(plan);
  const visit = (v: Json, set: (x: Json) => void) => {
    if (typeof v === 'string') strings.push(() => set(`${v}${char}`));
    else if (Array.isArray(v))
      v.forEach((x, i) => {
        visit(x, (y) => (v[i] = y));
      });
    else if (isObject(v)) for (const [k, x] of Object.entries(v)) visit(x, (y) => (v[k] = y));
  };
  if (copy.body !== undefined) visit(copy.body, (y) => (copy.body = y));
  for (const k of Object.keys(copy.query)) visit(copy.query[k] as Json, (y) => (copy.query[k] = y));
  for (const k of Object.keys(copy.params)) strings.push(() => (copy.params[k] = `${copy.params[k]}${char}`));
  if (strings.length === 0) copy.query = { ...copy.query, q: `a${char}` };
  else (strings[n % strings.length] as () => void)();
  return copy;
}

/** Dates and times at the edges of the calendar and of what the store keeps: some exist, some do not. */
export const calendarEdges = [
  '2026-02-30T10:00:00Z',
  '2025-02-29T00:00:00Z',
  '1900-02-29T00:00:00Z',
  '2024-02-29T12:00:00Z',
  '2000-02-29T12:00:00Z',
  '2026-04-31T00:00:00Z',
  '2026-12-31T24:00:00Z',
  '2026-06-30T23:59:60Z',
  '2026-01-01T10:00:00+15:59',
  '2026-01-01T10:00:00+16:00',
  '2026-01-01T10:00:00-23:59',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '0001-01-01T00:00:00+01:00',
  '9999-12-31T23:59:59Z',
  '9999-12-31T23:59:59.9999999Z',
  '9999-12-31T24:00:00Z',
  '1969-12-31T23:59:59.999999999Z',
];

/** The paths of a schema's `date-time` properties (objects only, as far as they nest). */
function dateTimePaths(schema: Schema | undefined, at: string[] = []): string[][] {
  if (!schema) return [];
  if (schema.format === 'date-time') return [at];
  const paths: string[][] = [];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    for (const s of (schema[key] ?? []) as Schema[]) paths.push(...dateTimePaths(s, at));
  for (const [k, s] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) paths.push(...dateTimePaths(s, [...at, k]));
  return paths;
}

/**
 * For a route that takes a `date-time` anywhere in its query or body: one otherwise valid request (sampled
 * with `seed`) per field and per value of `calendarEdges`. Empty for a route that takes none.
 */
export function calendarRequests(route: FuzzRoute, seed: number): FuzzRequest[] {
  const fields = [
    ...dateTimePaths(route.query).map((path) => ({ part: 'query' as const, path })),
    ...dateTimePaths(route.body).map((path) => ({ part: 'body' as const, path })),
  ];
  if (fields.length === 0) return [];
  const [plan] = fc.sample(planOf(route), { numRuns: 1, seed }) as [Plan];
  const requests: FuzzRequest[] = [];
  for (const { part, path } of fields)
    for (const value of calendarEdges) {
      const copy = structuredClone(plan);
      let target = (part === 'query' ? copy.query : isObject(copy.body) ? copy.body : (copy.body = {})) as { [k: string]: Json };
      for (const key of path.slice(0, -1)) {
        if (!isObject(target[key])) target[key] = {};
        target = target[key] as { [k: string]: Json };
      }
      target[path[path.length - 1] as string] = value;
      requests.push(build(route, `calendar edge ${path.join('.')}=${value}`, copy, {}));
    }
  return requests;
}
