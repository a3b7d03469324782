/**
 * A client written against the product's published interface: every request body is built from the
 * reference OpenAPI document's own schemas (every property it lists, with a value its type, format,
 * enumeration and bounds allow), sent to the path and method the reference names, and must get the status
 * the reference promises, with its query parameters filled from what the client knows. Besides the
 * configuration, it looks things up, drives connections, reads and changes its profile and administers
 * users. Runs when ../shared/reference/ is present.
 */
import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { asAdmin, createSpace, createUser, signIn } from '@scada/testkit/session';

const file = new URL('../../shared/reference/inscada-openapi-subset.json', import.meta.url);
type Schema = {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  minimum?: number;
  maxLength?: number;
  minLength?: number;
};
type Doc = {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId: string;
        parameters?: { name: string; in: string }[];
        requestBody?: { content: Record<string, { schema: Schema }> };
        responses: Record<string, unknown>;
      }
    >
  >;
  components: { schemas: Record<string, Schema> };
};

t.test(
  'a client built from the reference OpenAPI works unchanged',
  { skip: existsSync(file) ? false : 'no ../shared/reference' },
  async (t) => {
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
      if (name === 'protocol') return 'IEC 61850'; // the one protocol this client's devices speak
      if (s.enum) return s.enum[0];
      if (s.format === 'email') return 'operator@plant.example';
      if (s.type === 'object' || s.properties) {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(s.properties ?? {})) {
          if (resolve(v).format === 'binary') continue;
          out[k] = example(k, v);
        }
        return out;
      }
      if (s.type === 'integer' || s.type === 'number')
        return name === 'period' ? 1000 : Math.max(s.minimum ?? 0, name === 'width' || name === 'height' ? 4 : 1);
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
    /**
     * Sends the reference's operation with a body built from its schema and its query parameters from
     * `query` (or the ids known so far), as `who` (the editor by default); answers the parsed body.
     */
    const send = async (method: string, path: string, options: { who?: typeof editor; query?: Record<string, unknown> } = {}) => {
      const o = op(method, path);
      const search = new URLSearchParams();
      for (const q of o.parameters ?? []) {
        if (q.in !== 'query') continue;
        const value = options.query?.[q.name] ?? ids[q.name];
        for (const v of Array.isArray(value) ? value : [value]) search.append(q.name, String(v));
      }
      const url = path.replace(/\{(\w+)\}/g, (_, k: string) => encodeURIComponent(ids[k] as string)) + (search.size ? `?${search}` : '');
      const json = o.requestBody?.content['application/json'];
      const text = o.requestBody?.content['text/plain'];
      const headers: Record<string, string> = { ...(options.who ?? editor).headers };
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
      t.equal(
        String(res.status),
        promised,
        `${o.operationId}: ${method.toUpperCase()} ${url} answers ${promised}${String(res.status) === promised ? '' : ` (${answer.slice(0, 300)})`}`,
      );
      return answer ? (JSON.parse(answer) as Record<string, unknown>) : null;
    };

    ids.projectId = (await send('post', '/api/projects'))!.id as string;
    ids.faceplateId = (await send('post', '/api/faceplates'))!.id as string;
    ids.placeholderId = (await send('post', '/api/faceplates/{faceplateId}/placeholders'))!.id as string;
    ids.boardGroupId = (await send('post', '/api/dashboard'))!.id as string;
    ids.boardId = (await send('post', '/api/dashboard/{boardGroupId}/boards'))!.id as string;
    ids.scriptId = (await send('post', '/api/scripts'))!.id as string;
    for (const path of [
      '/api/projects',
      '/api/projects/{projectId}',
      '/api/faceplates',
      '/api/faceplates/{faceplateId}',
      '/api/faceplates/{faceplateId}/placeholders',
      '/api/faceplates/{faceplateId}/placeholders/{placeholderId}',
      '/api/dashboard',
      '/api/dashboard/{boardGroupId}',
      '/api/dashboard/{boardGroupId}/boards',
      '/api/dashboard/{boardGroupId}/boards/{boardId}',
      '/api/scripts',
      '/api/scripts/{scriptId}',
    ])
      await send('get', path);
    for (const path of [
      '/api/projects/{projectId}',
      '/api/faceplates/{faceplateId}',
      '/api/faceplates/{faceplateId}/placeholders/{placeholderId}',
      '/api/dashboard/{boardGroupId}',
      '/api/dashboard/{boardGroupId}/boards/{boardId}',
      '/api/scripts/{scriptId}',
    ])
      await send('put', path);
    await send('patch', '/api/scripts/{scriptId}/code');
    await theRestOfTheSurface();
    for (const path of [
      '/api/scripts/{scriptId}',
      '/api/dashboard/{boardGroupId}/boards/{boardId}',
      '/api/dashboard/{boardGroupId}',
      '/api/faceplates/{faceplateId}/placeholders/{placeholderId}',
      '/api/faceplates/{faceplateId}',
      '/api/projects/{projectId}',
    ])
      await send('delete', path);

    /** What an HMI does besides keeping its configuration: lookups, connections, profiles and user administration. */
    async function theRestOfTheSurface() {
      const admin = await asAdmin(p);
      const nameOf = async (path: string) =>
        ((await (await fetch(`${p.url}${path}`, { headers: editor.headers })).json()) as { name: string }).name;
      await send('get', '/api/projects/by-name', { query: { name: await nameOf(`/api/projects/${ids.projectId}`) } });
      await send('get', '/api/projects/by-active', { query: { isActive: true } });
      await send('get', '/api/projects/{projectId}/status');
      await send('get', '/api/faceplates/by-project');
      await send('get', '/api/faceplates/by-project-and-names', { query: { names: [await nameOf(`/api/faceplates/${ids.faceplateId}`)] } });
      await send('get', '/api/scripts/by-project');

      ids.connectionId = (await send('post', '/api/connections'))!.id as string;
      const name = await nameOf(`/api/connections/${ids.connectionId}`);
      await send('get', '/api/connections/status/by-ids', { query: { connectionIds: [ids.connectionId] } });
      await send('get', '/api/connections/status/by-project-and-name', { query: { name } });
      for (const path of [
        '/api/connections/start',
        '/api/connections/start/by-project-and-name',
        '/api/connections/stop/by-project-and-name',
      ])
        await send('post', path, { query: { name } });
      for (const path of ['/api/connections/start/by-project', '/api/connections/stop/by-project']) await send('post', path);
      await send('put', '/api/connections/{connectionId}');
      await send('delete', '/api/connections/{connectionId}');
      ids.connectionIds = (await send('post', '/api/connections'))!.id as string;
      await send('delete', '/api/connections/multi/by-ids');
      ids.scriptIds = (await send('post', '/api/scripts'))!.id as string;
      await send('delete', '/api/scripts/multi/by-ids');

      await send('get', '/api/users/profile');
      await send('put', '/api/users/profile');
      await send('get', '/api/users/default-space');
      await send('put', '/api/users/default-space', { query: { spaceId: 'default' } });
      await send('get', '/api/auth/features');

      const user = await createUser(p, { role: 'viewer' });
      Object.assign(ids, {
        userId: user.userId,
        username: user.username,
        spaceId: await createSpace(p, `ref-space-${Date.now()}`),
        roleId: 'editor',
      });
      const asAdminToo = { who: admin };
      await send('get', '/api/users/{userId}/spaces', asAdminToo);
      await send('post', '/api/users/{userId}/spaces', asAdminToo);
      await send('get', '/api/users/{userId}/spaces/{spaceId}', asAdminToo);
      await send('delete', '/api/users/{userId}/spaces/{spaceId}', asAdminToo);
      await send('get', '/api/users/{userId}/roles', asAdminToo);
      await send('post', '/api/users/{userId}/roles', asAdminToo);
      await send('get', '/api/users/{userId}/roles/{roleId}', asAdminToo);
      await send('get', '/api/users/{userId}/roles/by-space', { who: admin, query: { spaceId: 'default' } });
      await send('delete', '/api/users/{userId}/roles/{roleId}', asAdminToo);
      await send('get', '/api/users/by-active-space', asAdminToo);
      await send('get', '/api/users/{username}/default-space', asAdminToo);
      await send('put', '/api/users/{username}/default-space', { who: admin, query: { spaceId: 'default' } });
      await send('post', '/api/users/{username}/reset-password', asAdminToo);
      ids.userIds = user.userId;
      await send('delete', '/api/users/multi/by-ids', asAdminToo);
    }
  },
);
