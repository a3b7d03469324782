/**
 * A client written against the product's published interface: every request body is built from the
 * reference OpenAPI document's own schemas (every property it lists, with a value its type, format,
 * enumeration and bounds allow), sent to the path and method the reference names, and must get the status
 * the reference promises. Runs when ../shared/reference/ is present.
 */
import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';
import { startTestPlatform } from './support/platform.ts';
import { signIn } from './support/session.ts';

const file = new URL('../../shared/reference/inscada-openapi-subset.json', import.meta.url);
type Schema = { $ref?: string; type?: string; format?: string; enum?: unknown[]; properties?: Record<string, Schema>; required?: string[]; minimum?: number; maxLength?: number; minLength?: number };
type Doc = { paths: Record<string, Record<string, { operationId: string; requestBody?: { content: Record<string, { schema: Schema }> }; responses: Record<string, unknown> }>>; components: { schemas: Record<string, Schema> } };

t.test('a client built from the reference OpenAPI works unchanged', { skip: existsSync(file) ? false : 'no ../shared/reference' }, async (t) => {
  const doc = JSON.parse(readFileSync(file, 'utf8')) as Doc;
  const p = await startTestPlatform();
  t.teardown(() => p.stop());
  const editor = await signIn(p, { role: 'editor' });
  const ids: Record<string, string> = {};
  let serial = 0;

  const resolve = (s: Schema): Schema => (s.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()!]) : s);
  /** A value the schema allows, as a client filling a form from the schema would choose it. */
  const example = (name: string, raw: Schema): unknown => {
    const s = resolve(raw);
    if (s.enum) return s.enum[0];
    if (s.type === 'object' || s.properties) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(s.properties ?? {})) {
        if (resolve(v).format === 'binary') continue;
        out[k] = example(k, v);
      }
      return out;
    }
    if (s.type === 'integer' || s.type === 'number') return name === 'period' ? 1000 : Math.max(s.minimum ?? 0, name === 'width' || name === 'height' ? 4 : 1);
    if (s.type === 'boolean') return true;
    if (s.format === 'date-time') return new Date(Date.UTC(2026, 0, 1)).toISOString();
    if (name in ids) return ids[name];
    if (name === 'color') return '#336699';
    if (name === 'iframeUrl') return 'https://hmi.example/board';
    if (name === 'name') return `ref-${++serial}-${Date.now()}`;
    if (name === 'code') return 'return 1;';
    if (/Id$/.test(name)) return null;
    return 'x'.repeat(Math.min(Math.max(s.minLength ?? 0, 3), s.maxLength ?? 3));
  };
  const op = (method: string, path: string) => {
    const found = doc.paths[path]?.[method];
    if (!found) throw new Error(`the reference has no ${method} ${path}`);
    return found;
  };
  /** Sends the reference's operation with a body built from its schema; answers the parsed body. */
  const send = async (method: string, path: string, expectStatus = true) => {
    const o = op(method, path);
    const url = path.replace(/\{(\w+)\}/g, (_, k: string) => ids[k]);
    const json = o.requestBody?.content['application/json'];
    const text = o.requestBody?.content['text/plain'];
    const headers: Record<string, string> = { ...editor.headers };
    let body: string | undefined;
    if (json) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(example('', json.schema));
    } else if (text) {
      headers['content-type'] = 'text/plain';
      body = 'return 2;';
    }
    const res = await fetch(`${p.url}${url}`, { method: method.toUpperCase(), headers, body });
    const promised = Object.keys(o.responses)[0];
    const answer = await res.text();
    if (expectStatus) t.equal(String(res.status), promised, `${o.operationId}: ${method.toUpperCase()} ${url} answers ${promised}${String(res.status) === promised ? '' : ` (${answer.slice(0, 300)})`}`);
    return answer ? (JSON.parse(answer) as Record<string, unknown>) : null;
  };

  ids.projectId = (await send('post', '/api/projects'))!.id as string;
  ids.faceplateId = (await send('post', '/api/faceplates'))!.id as string;
  ids.placeholderId = (await send('post', '/api/faceplates/{faceplateId}/placeholders'))!.id as string;
  ids.boardGroupId = (await send('post', '/api/dashboard'))!.id as string;
  ids.boardId = (await send('post', '/api/dashboard/{boardGroupId}/boards'))!.id as string;
  ids.scriptId = (await send('post', '/api/scripts'))!.id as string;
  for (const path of ['/api/projects', '/api/projects/{projectId}', '/api/faceplates', '/api/faceplates/{faceplateId}', '/api/faceplates/{faceplateId}/placeholders',
    '/api/faceplates/{faceplateId}/placeholders/{placeholderId}', '/api/dashboard', '/api/dashboard/{boardGroupId}', '/api/dashboard/{boardGroupId}/boards',
    '/api/dashboard/{boardGroupId}/boards/{boardId}', '/api/scripts', '/api/scripts/{scriptId}']) await send('get', path);
  for (const path of ['/api/projects/{projectId}', '/api/faceplates/{faceplateId}', '/api/faceplates/{faceplateId}/placeholders/{placeholderId}',
    '/api/dashboard/{boardGroupId}', '/api/dashboard/{boardGroupId}/boards/{boardId}', '/api/scripts/{scriptId}']) await send('put', path);
  await send('patch', '/api/scripts/{scriptId}/code');
  for (const path of ['/api/scripts/{scriptId}', '/api/dashboard/{boardGroupId}/boards/{boardId}', '/api/dashboard/{boardGroupId}',
    '/api/faceplates/{faceplateId}/placeholders/{placeholderId}', '/api/faceplates/{faceplateId}', '/api/projects/{projectId}']) await send('delete', path);
});
