/**
 * The fuzz property, shared by the fuzz test and its benchmark: one generated request is sent as a
 * hostile client may send it, and its answer and the store are checked.
 */
import { Agent, request } from 'node:http';
import type { FuzzRequest, FuzzRoute } from './fuzz.ts';
import type { TestPlatform } from './platform.ts';

/** What a client must never see: a stack frame, a source position, SQL or a store's own words. */
export const leak =
  /\bat [\w$.<>]+ \(|node:internal|\.ts:\d+:\d+|\bSELECT\b|\bINSERT INTO\b|\bUPDATE \w+ SET\b|relation "|syntax error at|violates \w+ constraint|duplicate key|invalid byte sequence/i;

/** Tables whose rows a refused request may legitimately touch: logs, counters, leases, staging, bookkeeping. */
const bookkeeping = /log|attempt|fail|lock|lease|migration|revocation|session|stag|upload_chunk|otp_challenge/i;

/** A fingerprint of every table the services own but bookkeeping: equal fingerprints, equal contents. */
export async function storeFingerprint(p: TestPlatform): Promise<string> {
  const store = p.proc.store!;
  const tables = (
    await store.query<{ s: string; t: string }>(
      `select table_schema as s, table_name as t from information_schema.tables where table_schema in ('auth', 'config', 'protocol') and table_type = 'BASE TABLE' order by 1, 2`,
    )
  ).rows.filter((r) => !bookkeeping.test(r.t));
  const sql = tables
    .map((r) => `select '${r.s}.${r.t}' as t, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from "${r.s}"."${r.t}" x`)
    .join(' union all ');
  return (await store.query<{ t: string; h: string }>(sql)).rows.map((r) => `${r.t}=${r.h}`).join(',');
}

/** One answer as the fuzz client saw it. */
export type FuzzAnswer = { status: number; text: string; type: string };

/**
 * Sends generated requests with the given credentials as a hostile client may: a body on a GET too, the
 * path exactly as generated, over one keep-alive connection (so a refused body must leave it usable).
 */
export function fuzzClient(base: string, auth: Record<string, string>): { send(req: FuzzRequest): Promise<FuzzAnswer>; close(): void } {
  const url = new URL(base);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  // A keep-alive socket the server closed while the client was idle (the store checks between requests can
  // outlast the server's keep-alive timeout on a loaded machine) resets on reuse: such a request is sent
  // again once on a fresh socket, as Node's documentation advises.
  const send = (req: FuzzRequest, retried = false): Promise<FuzzAnswer> =>
    new Promise<FuzzAnswer>((resolve, reject) => {
      const headers: Record<string, string> = { ...auth, 'x-space': 'default', ...req.headers };
      if (req.body) headers['content-length'] = String(req.body.length);
      const call = request({ host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
            type: String(res.headers['content-type'] ?? ''),
          }),
        );
        res.on('error', reject);
      });
      call.on('error', (err: NodeJS.ErrnoException) => {
        if (!retried && call.reusedSocket && err.code === 'ECONNRESET') send(req, true).then(resolve, reject);
        else reject(err);
      });
      call.end(req.body);
    });
  return { send, close: () => agent.destroy() };
}

/**
 * The property for one request: never a 5xx, never a leak, every refusal a problem document, and a
 * refused write leaves the store as it was. Throws what broke it; answers the status otherwise.
 */
export async function checkRequest(
  p: TestPlatform,
  client: ReturnType<typeof fuzzClient>,
  route: FuzzRoute,
  req: FuzzRequest,
): Promise<number> {
  const before = route.writes ? await storeFingerprint(p) : '';
  const res = await client.send(req);
  if (res.status >= 500) throw new Error(`${req.mutation}: ${res.status} ${res.text.slice(0, 300)}`);
  if (leak.test(res.text)) throw new Error(`${req.mutation}: the answer leaks internals: ${res.text.slice(0, 300)}`);
  if (res.status >= 400 && !res.type.startsWith('application/problem+json'))
    throw new Error(`${req.mutation}: a ${res.status} that is not a problem`);
  if (route.writes && res.status >= 400 && (await storeFingerprint(p)) !== before)
    throw new Error(`${req.mutation}: refused with ${res.status}, yet the store changed`);
  return res.status;
}
