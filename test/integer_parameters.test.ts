/**
 * Integer parameters take decimal digits only, on every operation: the test walks the registry, finds
 * every integer path and query parameter, and sends each one through the gateway spelled as a number
 * that is no integer in decimal digits (`2.5`, `1e1`, `1e9`, `1.0`, `0x10`, ` 1`, `+1`, empty): 400, a
 * problem naming the parameter. The same request with the parameter spelled right is not a 400.
 */
import t from 'tap';
import { operations, type Operation } from '@scada/contracts';
import { startTestPlatform } from '@scada/testkit/platform';
import { asAdmin, signIn } from '@scada/testkit/session';
import { liveConnection, until } from '@scada/testkit/live';

const p = await startTestPlatform();
t.teardown(() => p.stop());
const admin = await asAdmin(p);
const editor = await signIn(p, { role: 'editor' });
const encoder = new TextEncoder();

type Schema = {
  type?: string;
  minimum?: number;
  anyOf?: Schema[];
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
};
type IntegerParameter = { op: Operation; part: 'params' | 'query'; name: string; schema: Schema };

/** The integer schema a parameter takes (itself, a member of its union, or its list's items). */
function integerOf(schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  if (schema.type === 'integer') return schema;
  if (schema.type === 'array') return integerOf(schema.items);
  return schema.anyOf?.map(integerOf).find((s) => s !== undefined);
}

const integerParameters: IntegerParameter[] = operations.flatMap((op) => {
  if (!op.http) return [];
  const parts = op.request.properties as Record<string, Schema>;
  return (['params', 'query'] as const).flatMap((part) =>
    Object.entries(parts[part]?.properties ?? {}).flatMap(([name, property]) => {
      const schema = integerOf(property);
      return schema ? [{ op, part, name, schema }] : [];
    }),
  );
});

// A connection of the default space with one recorded attribute: the history asks for one.
const connection = await liveConnection(p, 1, { editor });
const reference = 'SIMLD0/MMXU1.TotW.mag.f[MX]';
const receivedAt = new Date(Date.now() - 1000).toISOString();
p.proc.bus.publish(
  'events.protocol.report',
  encoder.encode(
    JSON.stringify({
      space: 'default',
      connectionId: connection.id,
      rcb: 'r',
      rptId: 'r',
      seqNum: 1,
      entryId: null,
      at: receivedAt,
      values: [
        {
          connectionId: connection.id,
          reference,
          value: 1,
          quality: null,
          timestamp: null,
          timestampSource: null,
          receivedAt,
          rcb: 'r',
          reason: null,
          seqNum: 1,
        },
      ],
    }),
  ),
);
await until('the value recorded', async () => {
  const res = await fetch(`${p.url}/api/connections/${connection.id}/history/summary`, { headers: admin.headers });
  return ((await res.json()) as unknown[]).length === 1;
});

/** Values for the other parameters a request needs, by name: enough for a request the schema takes. */
const fills: Record<string, string> = { connectionId: connection.id, scriptId: crypto.randomUUID(), reference };

/** The URL of a request with `value` for the parameter under test, every other required parameter filled. */
function urlOf(param: IntegerParameter, value: string): string {
  const http = param.op.http!;
  const path = http.path.replace(/:(\w+)/g, (_, name: string) =>
    encodeURIComponent(param.part === 'params' && name === param.name ? value : (fills[name] ?? crypto.randomUUID())),
  );
  const query = new URLSearchParams();
  const schema = (param.op.request.properties as Record<string, Schema>).query;
  for (const name of schema?.required ?? []) if (name !== param.name) query.set(name, fills[name] ?? '');
  if (param.part === 'query') query.set(param.name, value);
  return `${p.url}${path}?${query}`;
}

const misspellings = ['2.5', '1e1', '1e9', '1.0', '0x10', ' 1', '+1', ''];

t.test(`every integer parameter of the registry takes decimal digits only (${p.mode})`, async (t) => {
  t.ok(integerParameters.length >= 6, `${integerParameters.length} integer parameters found`);
  for (const param of integerParameters) {
    const what = `${param.op.operationId} ${param.part === 'params' ? 'path' : 'query'} ${param.name}`;
    const good = String(param.schema.minimum !== undefined && param.schema.minimum > 1 ? param.schema.minimum : 1);
    const right = await fetch(urlOf(param, good), { headers: admin.headers });
    const text = await right.text();
    t.not(right.status, 400, `${what}=${good}: not 400 (${text.slice(0, 200)})`);
    for (const bad of [...misspellings, ...(param.schema.minimum !== undefined && param.schema.minimum >= 0 ? ['-1'] : [])]) {
      const res = await fetch(urlOf(param, bad), { headers: admin.headers });
      t.equal(res.status, 400, `${what}=${JSON.stringify(bad)}: 400`);
      t.match(res.headers.get('content-type'), /^application\/problem\+json/);
      const body = (await res.json()) as { status: number; code: string; errors?: { path: string }[] };
      t.match(body, { status: 400, code: 'validation_failed' });
      t.ok(
        body.errors?.some((e) => e.path === `/${param.part}/${param.name}`),
        `${what}=${JSON.stringify(bad)}: the problem names the parameter (${JSON.stringify(body.errors)})`,
      );
    }
  }
});

t.test('the history and the alarm journal refuse what they took before', async (t) => {
  const journal = await fetch(`${p.url}/api/alarms/journal?limit=1e9`, { headers: admin.headers });
  t.equal(journal.status, 400, 'limit=1e9: 400');
  const history = await fetch(`${p.url}/api/connections/${connection.id}/history?${new URLSearchParams({ reference, maxPoints: '2.5' })}`, {
    headers: admin.headers,
  });
  t.equal(history.status, 400, 'maxPoints=2.5: 400');
  const csv = await fetch(
    `${p.url}/api/connections/${connection.id}/history?${new URLSearchParams({ reference, maxPoints: '2.5', format: 'csv' })}`,
    { headers: admin.headers },
  );
  t.equal(csv.status, 400, 'maxPoints=2.5 with format=csv: 400');
});
