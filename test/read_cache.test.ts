/**
 * The gateway's read cache, through HTTP: a repeated read of configuration is answered from the cache
 * with the same ETag (304 to If-None-Match), a write through a gateway is seen by the next read through
 * it (read-your-writes), a write through one gateway is seen by reads through another within the bound
 * (its delay measured), every kind of write invalidates (JSON, upload, deletion, code), and the access
 * checks still run on every cached read.
 */
import t from 'tap';
import { secondGateway, startTestPlatform } from '@scada/testkit/platform';
import { createSpace, signIn } from '@scada/testkit/session';

const p = await startTestPlatform();
t.teardown(() => p.stop());
const other = await secondGateway(p);
t.teardown(() => other.stop());

const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' });

/** The gateway's count of cacheable reads answered one way. */
async function reads(url: string, outcome: 'hit' | 'miss' | 'off'): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`gateway_read_cache_total{outcome="${outcome}"}`));
  return Number(line?.split(' ')[1] ?? 0);
}

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

t.test(`read cache (${p.mode})`, async (t) => {
  const editor = await signIn(p, { role: 'editor' });
  const viewer = await signIn(p, { role: 'viewer' });
  const elsewhere = await createSpace(p, `cache-${Date.now()}`);
  const stranger = await signIn(p, { role: 'editor', spaces: [elsewhere] });
  const send = (base: string, path: string, who = editor, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { ...json(who.headers), ...(init.headers as Record<string, string>) } });
  const create = async (name: string) => {
    const res = await send(p.url, '/api/projects', editor, { method: 'POST', body: JSON.stringify({ name, isActive: true }) });
    t.equal(res.status, 200);
    return (await res.json()) as { id: string; name: string };
  };
  const rename = (base: string, id: string, name: string) =>
    send(base, `/api/projects/${id}`, editor, { method: 'PUT', body: JSON.stringify({ name, isActive: true }) });
  const project = await create(`Cached ${Date.now()}`);

  t.test('a repeated read is answered from the cache, with one ETag and 304 to If-None-Match', async (t) => {
    const hits = await reads(p.url, 'hit');
    const first = await send(p.url, `/api/projects/${project.id}`);
    const again = await send(p.url, `/api/projects/${project.id}`);
    t.equal(first.status, 200);
    t.equal(await again.text(), await first.text(), 'the same answer');
    const etag = first.headers.get('etag');
    t.match(etag, /^"[A-Za-z0-9_-]+"$/, 'a strong entity tag');
    t.equal(again.headers.get('etag'), etag);
    t.equal(again.headers.get('cache-control'), 'no-store', 'no HTTP cache keeps it (user data)');
    t.ok((await reads(p.url, 'hit')) > hits, 'answered from the cache');
    const unchanged = await send(p.url, `/api/projects/${project.id}`, editor, { headers: { 'if-none-match': etag as string } });
    t.equal(unchanged.status, 304);
    t.equal(await unchanged.text(), '', 'no body');
    t.equal(unchanged.headers.get('etag'), etag);
    t.equal((await rename(p.url, project.id, `${project.id} renamed`)).status, 204);
    const changed = await send(p.url, `/api/projects/${project.id}`, editor, { headers: { 'if-none-match': etag as string } });
    t.equal(changed.status, 200, 'after a write: the new answer');
    t.not(changed.headers.get('etag'), etag);
  });

  t.test('one entry per request, however its URL is spelled', async (t) => {
    await send(p.url, '/api/projects');
    const hits = await reads(p.url, 'hit');
    for (const spelling of ['/api/projects?', '/api/projects?&&&', '/api/projects?&&&&&&&&&&'])
      t.equal((await send(p.url, spelling)).status, 200);
    t.equal(await reads(p.url, 'hit'), hits + 3, 'each a hit on the same entry');
  });

  t.test('the access checks run on every read, cached or not', async (t) => {
    await send(p.url, `/api/projects/${project.id}`, viewer);
    t.equal((await send(p.url, `/api/projects/${project.id}`, viewer)).status, 200, 'a viewer of the space');
    t.equal((await send(p.url, `/api/projects/${project.id}`, stranger)).status, 404, 'another space: not found');
    t.equal((await fetch(`${p.url}/api/projects/${project.id}`)).status, 401, 'no session');
    t.equal((await send(p.url, '/api/projects/by-name?name=', editor)).status, 400, 'validated at the edge');
  });

  t.test('device and session operations leave the cache alone', async (t) => {
    const path = `/api/projects/${project.id}`;
    await send(p.url, path);
    await send(other.url, path);
    const hits = { here: await reads(p.url, 'hit'), there: await reads(other.url, 'hit') };
    // A device read of a connection that is not there: refused, and no configuration changed.
    const none = '00000000-0000-4000-8000-000000000000';
    const read = await send(p.url, `/api/connections/${none}/read`, viewer, {
      method: 'POST',
      body: JSON.stringify(['LD0/LLN0.Mod.stVal[ST]']),
    });
    t.equal(read.status < 500, true, `refused (${read.status})`);
    await send(p.url, `/api/connections/${none}/stop`, editor, { method: 'POST' });
    await send(p.url, path);
    await send(other.url, path);
    t.equal(await reads(p.url, 'hit'), hits.here + 1, 'still a hit on the gateway that answered them');
    t.equal(await reads(other.url, 'hit'), hits.there + 1, 'and on the other');
  });

  t.test('read-your-writes on the gateway that answered the write', async (t) => {
    const stale: number[] = [];
    for (let i = 0; i < 25; i++) {
      // Warm: the next read could come from the cache.
      await send(p.url, `/api/projects/${project.id}`);
      await send(p.url, '/api/projects');
      const name = `round ${i} ${Date.now()}`;
      t.equal((await rename(p.url, project.id, name)).status, 204);
      const one = (await (await send(p.url, `/api/projects/${project.id}`)).json()) as { name: string };
      const list = (await (await send(p.url, '/api/projects')).json()) as { id: string; name: string }[];
      if (one.name !== name || list.find((x) => x.id === project.id)?.name !== name) stale.push(i);
    }
    t.same(stale, [], 'every read after a write saw it');
  });

  t.test('another gateway sees a write within the bound; its delay measured', async (t) => {
    const delays: number[] = [];
    for (let i = 0; i < 30; i++) {
      // Warm the other gateway's cache with the old answer.
      await send(other.url, `/api/projects/${project.id}`);
      await send(other.url, `/api/projects/${project.id}`);
      const name = `seen ${i} ${Date.now()}`;
      t.equal((await rename(p.url, project.id, name)).status, 204);
      const acknowledged = performance.now();
      for (;;) {
        const seen = (await (await send(other.url, `/api/projects/${project.id}`)).json()) as { name: string };
        const delay = performance.now() - acknowledged;
        if (seen.name === name) {
          delays.push(delay);
          break;
        }
        if (delay > 2000) {
          delays.push(delay);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
    const p99 = percentile(delays, 0.99);
    t.comment(`write acknowledged → seen on another gateway: p50 ${percentile(delays, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`);
    t.ok(Math.max(...delays) < 1000, 'never over the cache age bound (1 s)');
  });

  t.test('every kind of write invalidates what it changed', async (t) => {
    const warm = async (path: string) => {
      await send(other.url, path);
      return send(other.url, path);
    };
    /** Reads `path` through the other gateway until `done` holds (within the bound). */
    const eventually = async (path: string, done: (body: unknown, status: number) => boolean) => {
      const started = performance.now();
      for (;;) {
        const res = await send(other.url, path);
        const body = res.status === 200 ? await res.json() : null;
        if (done(body, res.status)) return true;
        if (performance.now() - started > 1500) return false;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    // A script's code (text/plain).
    const script = (await (
      await send(p.url, '/api/scripts', editor, {
        method: 'POST',
        body: JSON.stringify({ name: `s${Date.now()}`, projectId: project.id, type: 'None', log: false, code: 'return 1;' }),
      })
    ).json()) as { id: string };
    await warm(`/api/scripts/${script.id}`);
    t.equal(
      (
        await fetch(`${p.url}/api/scripts/${script.id}/code`, {
          method: 'PATCH',
          headers: { ...editor.headers, 'content-type': 'text/plain' },
          body: 'return 2;',
        })
      ).status,
      204,
    );
    t.ok(await eventually(`/api/scripts/${script.id}`, (b) => (b as { code?: string } | null)?.code === 'return 2;'), 'script code');

    // A connection created with a file (the streamed upload route), then deleted.
    await warm('/api/connections');
    const form = new FormData();
    form.set(
      'connection',
      JSON.stringify({ name: `c${Date.now()}`, ip: '127.0.0.1', port: 102, projectId: project.id, protocol: 'IEC 61850' }),
    );
    const created = await fetch(`${p.url}/api/protocols/iec61850/connections/with-file`, {
      method: 'POST',
      headers: editor.headers,
      body: form,
    });
    t.equal(created.status, 200);
    const connection = (await created.json()) as { id: string };
    t.ok(await eventually('/api/connections', (b) => (b as { id: string }[]).some((c) => c.id === connection.id)), 'an upload');
    await warm(`/api/connections/${connection.id}`);
    t.equal(
      (await send(p.url, `/api/protocols/iec61850/connections/${connection.id}/with-file`, editor, { method: 'DELETE' })).status,
      204,
    );
    t.ok(await eventually(`/api/connections/${connection.id}`, (_b, status) => status === 404), 'a deletion');

    // A board of a board group.
    const group = (await (
      await send(p.url, '/api/dashboard', editor, { method: 'POST', body: JSON.stringify({ name: `g${Date.now()}` }) })
    ).json()) as { id: string };
    await warm(`/api/dashboard/${group.id}/boards`);
    const board = await send(p.url, `/api/dashboard/${group.id}/boards`, editor, {
      method: 'POST',
      body: JSON.stringify({ name: 'b', type: 'Html', header: true }),
    });
    t.ok(board.status < 300, `board created (${board.status} ${await board.text()})`);
    t.ok(await eventually(`/api/dashboard/${group.id}/boards`, (b) => (b as unknown[]).length === 1), 'a nested create');
  });
});
