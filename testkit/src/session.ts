import { randomBytes } from 'node:crypto';
import type { TestPlatform } from './platform.ts';
import { testAdminPassword } from './settings.ts';

/** A role of the platform. */
export type RoleName = 'admin' | 'editor' | 'operator' | 'viewer';

/** A signed-in test user: the headers to send, and who it is. */
export type SignedIn = {
  headers: Record<string, string>;
  userId: string;
  username: string;
  password: string;
  accessToken: string;
  refreshToken: string;
};

const adminSessions = new WeakMap<TestPlatform, Promise<SignedIn>>();

/** Signs in with a JSON body; the answer as it came. */
export async function login(p: TestPlatform, username: string, password: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${p.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ username, password }),
  });
}

/** Signs in and answers bearer headers; fails the test when the login does not succeed. */
export async function bearerLogin(p: TestPlatform, username: string, password: string): Promise<SignedIn> {
  const res = await login(p, username, password);
  if (res.status !== 200) throw new Error(`login of ${username} answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { access_token: string; refresh_token: string };
  const me = await fetch(`${p.url}/api/auth/current-user`, { headers: { authorization: `Bearer ${body.access_token}` } });
  const { id } = (await me.json()) as { id: string };
  return {
    headers: { authorization: `Bearer ${body.access_token}` },
    userId: id,
    username,
    password,
    accessToken: body.access_token,
    refreshToken: body.refresh_token,
  };
}

/** The bootstrap administrator's session, one per platform. */
export function asAdmin(p: TestPlatform): Promise<SignedIn> {
  let session = adminSessions.get(p);
  if (!session) {
    session = bearerLogin(p, 'admin', testAdminPassword);
    adminSessions.set(p, session);
  }
  return session;
}

/** Creates a space as the administrator; answers its id. */
export async function createSpace(p: TestPlatform, name: string): Promise<string> {
  const admin = await asAdmin(p);
  const res = await fetch(`${p.url}/api/spaces`, {
    method: 'POST',
    headers: { ...admin.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (res.status !== 200) throw new Error(`createSpace answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** Creates a user with a role in some spaces (default: `default`); answers its id and password. */
export async function createUser(
  p: TestPlatform,
  who: { role: RoleName; spaces?: string[]; username?: string; password?: string },
): Promise<{ userId: string; username: string; password: string }> {
  const admin = await asAdmin(p);
  const username = who.username ?? `${who.role}-${randomBytes(4).toString('hex')}`;
  const password = who.password ?? `pw-${randomBytes(8).toString('hex')}`;
  const res = await fetch(`${p.url}/api/users`, {
    method: 'POST',
    headers: { ...admin.headers, 'content-type': 'application/json' },
    body: JSON.stringify({ username, password, roles: [who.role], spaces: who.spaces ?? ['default'] }),
  });
  if (res.status !== 200) throw new Error(`createUser answered ${res.status}: ${await res.text()}`);
  return { userId: ((await res.json()) as { id: string }).id, username, password };
}

/** A fresh user with that role in those spaces, signed in with a bearer token. */
export async function signIn(p: TestPlatform, who: { role: RoleName; spaces?: string[] }): Promise<SignedIn> {
  const user = await createUser(p, who);
  return bearerLogin(p, user.username, user.password);
}

/** The `name=value` pairs of a response's Set-Cookie headers, with their attributes. */
export function cookiesOf(res: Response): Record<string, { value: string; attributes: string }> {
  const out: Record<string, { value: string; attributes: string }> = {};
  for (const line of res.headers.getSetCookie()) {
    const [pair = '', ...attrs] = line.split('; ');
    const eq = pair.indexOf('=');
    out[pair.slice(0, eq)] = { value: pair.slice(eq + 1), attributes: attrs.join('; ') };
  }
  return out;
}
