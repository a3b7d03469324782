/**
 * A steady load of mixed reads and writes spread over the gateways as a load balancer would: one new
 * connection per request, the next ready gateway in turn (readiness polled every 100 ms), and a request
 * that could not connect at all (the gateway is gone) sent to another one, since it never reached anybody.
 * Every request is recorded.
 */
import { request } from 'node:http';

/** What the load does: a project create (write) or a read in one of the services. */
export type OpKind = 'write' | 'read-config' | 'read-auth' | 'read-protocol';

/** One request as the client saw it. `status` 0: no answer (connection reset, hang-up). */
export type Sample = { kind: OpKind; start: number; end: number; status: number; retryAfter: string | null; error?: string; name?: string };

export type Load = {
  samples: Sample[];
  /** Names of the projects whose create was answered 2xx. */
  acknowledged: Set<string>;
  /** Names of creates answered with anything else (their outcome is unknown to the client). */
  unanswered: Set<string>;
  stop(): Promise<void>;
};

type Answer = { status: number; retryAfter: string | null; body: string; error?: string };

function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer & { refused?: boolean }> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, headers: { ...headers, connection: 'close' }, agent: false, timeout: 30_000 },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, retryAfter: (res.headers['retry-after'] as string | undefined) ?? null, body: text }),
        );
        res.on('error', (err) => resolve({ status: 0, retryAfter: null, body: '', error: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ status: 0, retryAfter: null, body: '', error: err.code ?? err.message, refused: err.code === 'ECONNREFUSED' }),
    );
    req.end(body);
  });
}

/**
 * Runs `workers` loops until stopped. Each loop: 30 % project creates with unique names, 40 % reads of a
 * known project, 15 % user listings (auth service), 15 % connection listings (protocol service).
 */
export function startLoad(options: { ports: number[]; token: string; workers: number; namePrefix: string }): Load {
  const samples: Sample[] = [];
  const acknowledged = new Set<string>();
  const unanswered = new Set<string>();
  const projectIds: string[] = [];
  const headers = { authorization: `Bearer ${options.token}` };
  let running = true;
  let turn = 0;
  let seq = 0;

  // As a balancer that follows readiness: every gateway's /readyz is polled each 100 ms, and requests go to
  // the ready ones in turn (to every gateway while none is ready).
  const ready = new Map(options.ports.map((port) => [port, true]));
  const polling = new Set<number>();
  const poll = setInterval(() => {
    for (const port of options.ports) {
      if (polling.has(port)) continue;
      polling.add(port);
      void send(port, 'GET', '/readyz', {}).then((a) => {
        ready.set(port, a.status === 200);
        polling.delete(port);
      });
    }
  }, 100);

  const balanced = async (method: string, path: string, body?: string): Promise<Answer> => {
    const live = options.ports.filter((port) => ready.get(port));
    const pool = live.length > 0 ? live : options.ports;
    const first = turn++ % pool.length;
    const order = [...pool.slice(first), ...pool.slice(0, first), ...options.ports.filter((port) => !pool.includes(port))];
    let answer: Answer & { refused?: boolean } = { status: 0, retryAfter: null, body: '' };
    for (const port of order) {
      answer = await send(port, method, path, body ? { ...headers, 'content-type': 'application/json' } : headers, body);
      if (!answer.refused) return answer;
    }
    return answer;
  };

  const once = async () => {
    const dice = Math.random();
    const start = Date.now();
    let kind: OpKind;
    let name: string | undefined;
    let answer: Answer;
    if (dice < 0.3 || projectIds.length === 0) {
      kind = 'write';
      name = `${options.namePrefix}-${++seq}`;
      answer = await balanced('POST', '/api/projects', JSON.stringify({ name, isActive: true }));
      if (answer.status >= 200 && answer.status < 300) {
        acknowledged.add(name);
        try {
          projectIds.push((JSON.parse(answer.body) as { id: string }).id);
        } catch {
          // an answer without an id is recorded as it is
        }
      } else unanswered.add(name);
    } else if (dice < 0.7) {
      kind = 'read-config';
      answer = await balanced('GET', `/api/projects/${projectIds[Math.floor(Math.random() * projectIds.length)]}`);
    } else if (dice < 0.85) {
      kind = 'read-auth';
      answer = await balanced('GET', '/api/users');
    } else {
      kind = 'read-protocol';
      answer = await balanced('GET', '/api/connections');
    }
    samples.push({ kind, start, end: Date.now(), status: answer.status, retryAfter: answer.retryAfter, error: answer.error, name });
  };

  const loops = Array.from({ length: options.workers }, async () => {
    while (running) {
      await once();
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  return {
    samples,
    acknowledged,
    unanswered,
    stop: async () => {
      running = false;
      clearInterval(poll);
      await Promise.all(loops);
    },
  };
}

/** Logs in as the administrator through a gateway and answers the bearer access token. */
export async function adminToken(port: number, password: string): Promise<string> {
  const answer = await send(
    port,
    'POST',
    '/login',
    { 'content-type': 'application/json' },
    JSON.stringify({ username: 'admin', password }),
  );
  if (answer.status !== 200) throw new Error(`login failed: ${answer.status} ${answer.body}`);
  return (JSON.parse(answer.body) as { access_token: string }).access_token;
}
