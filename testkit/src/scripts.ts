import type { TestPlatform } from './platform.ts';
import type { SignedIn } from './session.ts';

/** A run by hand as the API answers it. */
export type RunAnswer = {
  outcome: string;
  result: unknown;
  logs: string[];
  durationMs: number;
  error?: { name: string; message: string; line: number | null; column: number | null };
};

/** Scripts of one project, called as one user. */
export type ScriptsApi = {
  projectId: string;
  /** Creates a script (type None unless given); answers its id. */
  create(code: string, fields?: Record<string, unknown>): Promise<string>;
  /** Replaces a script's code. */
  setCode(id: string, code: string): Promise<void>;
  /** `POST …/run`: the status and the body. */
  run(id: string): Promise<{ status: number; body: RunAnswer & Record<string, unknown> }>;
  /** Creates a script and runs it by hand once; fails unless the run is answered 200. */
  runCode(code: string, fields?: Record<string, unknown>): Promise<RunAnswer>;
  /** Any call under `/api/scripts`, as this user. */
  api(method: string, path: string, body?: unknown): Promise<Response>;
};

let serial = 0;

/** Makes a project as `user` and answers calls on its scripts. */
export async function scriptsApi(p: TestPlatform, user: SignedIn, extraHeaders: Record<string, string> = {}): Promise<ScriptsApi> {
  const headers = { ...user.headers, ...extraHeaders };
  const json = { ...headers, 'content-type': 'application/json' };
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${p.url}/api/scripts${path}`, {
      method,
      headers: body === undefined ? headers : json,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const made = await fetch(`${p.url}/api/projects`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ name: `scripts-${Date.now()}-${++serial}`, isActive: true }),
  });
  if (made.status !== 200) throw new Error(`creating the project answered ${made.status}: ${await made.text()}`);
  const projectId = ((await made.json()) as { id: string }).id;
  const create = async (code: string, fields: Record<string, unknown> = {}) => {
    const res = await api('POST', '', { name: `s-${++serial}`, projectId, type: 'None', log: true, code, ...fields });
    if (res.status !== 200) throw new Error(`creating the script answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  const run = async (id: string) => {
    const res = await api('POST', `/${id}/run`);
    return { status: res.status, body: (await res.json()) as RunAnswer & Record<string, unknown> };
  };
  return {
    projectId,
    create,
    api,
    run,
    setCode: async (id, code) => {
      const res = await fetch(`${p.url}/api/scripts/${id}/code`, {
        method: 'PATCH',
        headers: { ...headers, 'content-type': 'text/plain' },
        body: code,
      });
      if (res.status !== 204) throw new Error(`setting the code answered ${res.status}: ${await res.text()}`);
    },
    runCode: async (code, fields) => {
      const { status, body } = await run(await create(code, fields));
      if (status !== 200) throw new Error(`the run answered ${status}: ${JSON.stringify(body)}`);
      return body;
    },
  };
}
