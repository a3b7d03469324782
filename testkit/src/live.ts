import type { TestPlatform } from './platform.ts';
import { signIn, type SignedIn } from './session.ts';

/** Polls `probe` every 100 ms until it answers something truthy; fails after `ms`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A connection to a device on loopback, created by an editor through the API, with calls on its paths. */
export type LiveConnection = {
  id: string;
  editor: SignedIn;
  /** Calls `/api/connections/{id}<path>` as the editor; a body is sent as JSON. */
  api(method: string, path: string, body?: unknown): Promise<Response>;
  session(): Promise<Record<string, unknown> & { state: string; warnings?: { code: string; detail: string }[] }>;
  /** Starts the connection and waits until it is connected. */
  connect(): Promise<void>;
};

/** Creates a connection to `port` (with an SCL file when given) in a fresh project. */
export async function liveConnection(
  p: TestPlatform,
  port: number,
  options: { scl?: string; editor?: SignedIn; connection?: Record<string, unknown> } = {},
): Promise<LiveConnection> {
  const editor = options.editor ?? (await signIn(p, { role: 'editor' }));
  const json = { ...editor.headers, 'content-type': 'application/json' };
  const project = (await (
    await fetch(`${p.url}/api/projects`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: `live-${Date.now()}-${Math.random()}`, isActive: true }),
    })
  ).json()) as { id: string };
  const form = new FormData();
  form.set(
    'connection',
    JSON.stringify({ name: 'sim', ip: '127.0.0.1', port, projectId: project.id, protocol: 'IEC 61850', ...options.connection }),
  );
  if (options.scl) form.set('file', new Blob([options.scl], { type: 'application/xml' }), 'device.icd');
  const created = await fetch(`${p.url}/api/protocols/iec61850/connections/with-file`, {
    method: 'POST',
    headers: editor.headers,
    body: form,
  });
  if (created.status !== 200) throw new Error(`creating the connection answered ${created.status}: ${await created.text()}`);
  const id = ((await created.json()) as { id: string }).id;
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${p.url}/api/connections/${id}${path}`, {
      method,
      headers: body === undefined ? editor.headers : json,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const session = async () => (await (await api('GET', '/session')).json()) as Record<string, unknown> & { state: string };
  return {
    id,
    editor,
    api,
    session,
    connect: async () => {
      const res = await api('POST', '/start');
      if (res.status !== 204) throw new Error(`start answered ${res.status}`);
      await until('connected', async () => (await session()).state === 'connected');
    },
  };
}
