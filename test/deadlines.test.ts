/**
 * Every route of the gateway sends its operation's deadline with the request: the operations, the SCL
 * upload and download, and the session routes. Seen on the bus itself, where a listener outside the
 * queue groups receives a copy of every request with its headers.
 */
import { busHeaders, deadlines } from '@scada/contracts';
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { generateScd } from '@scada/testkit/scd';
import { asAdmin, signIn } from '@scada/testkit/session';

const standard = 4321;
const p = await startTestPlatform({ BUS_TIMEOUT_MS: String(standard) });
t.teardown(() => p.stop());
const seen = new Map<string, number[]>();

/**
 * The time left a request was sent with: its `x-timeout-ms` header on the in-process bus; on NATS, where
 * every request carries a signed context, the context's `tmo` claim (its first part is the claims as
 * base64url JSON), since the time left travels inside it and nowhere beside it.
 */
function budgetOf(headers: Record<string, string | undefined>): string | undefined {
  const context = headers[busHeaders.context];
  if (context === undefined) return headers[busHeaders.timeout];
  const claims = JSON.parse(Buffer.from(context.split('.')[0] as string, 'base64url').toString()) as { tmo?: string };
  return claims.tmo;
}
// The services' own subject trees: what the platform's NATS user may subscribe to where authentication is on.
const listeners = ['auth', 'config', 'protocol'].map((service) =>
  p.proc.bus.subscribe(`${service}.v1.>`, (msg) => {
    const budget = budgetOf(msg.headers);
    if (budget === undefined) return;
    const operation = msg.subject.split('.').slice(-1)[0] as string;
    seen.set(operation, [...(seen.get(operation) ?? []), Number(budget)]);
  }),
);
t.teardown(() => Promise.all(listeners.map((l) => l.unsubscribe())));

t.test(`each route sends its operation's deadline, the standard one or the device one (${p.mode})`, async (t) => {
  const admin = await asAdmin(p);
  const editor = await signIn(p, { role: 'editor' });
  const json = { ...editor.headers, 'content-type': 'application/json' };
  const project = (await (
    await fetch(`${p.url}/api/projects`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: `d ${Date.now()}`, isActive: true }),
    })
  ).json()) as { id: string };
  const form = new FormData();
  form.set('connection', JSON.stringify({ name: 'deadline', ip: '127.0.0.1', port: 1, projectId: project.id, protocol: 'IEC 61850' }));
  form.set('file', new Blob([generateScd(1) as Uint8Array<ArrayBuffer>]), 'station.scd');
  const created = (await (
    await fetch(`${p.url}/api/protocols/iec61850/connections/with-file`, { method: 'POST', headers: editor.headers, body: form })
  ).json()) as { id: string };
  await (await fetch(`${p.url}/api/protocols/iec61850/connections/${created.id}/file`, { headers: editor.headers })).arrayBuffer();
  await fetch(`${p.url}/api/connections/${created.id}/read`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ references: ['IED0LD0/LLN0.Mod.stVal[ST]'] }),
  });
  await fetch(`${p.url}/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refresh_token: admin.refreshToken }),
  });
  await new Promise((r) => setTimeout(r, 100));

  const expected: Record<string, number> = {
    login: standard,
    refresh: standard,
    createProject: standard,
    stageUploadChunk: standard,
    createConnectionWithFile: standard,
    readFileChunk: standard,
    readConnectionValues: deadlines.deviceMs,
  };
  for (const [operation, budget] of Object.entries(expected)) {
    const sent = seen.get(operation) ?? [];
    t.ok(sent.length > 0, `${operation} was called`);
    t.ok(
      sent.every((b) => b <= budget && b >= budget - 1000),
      `${operation} carried ${budget} ms (${sent.join(', ')})`,
    );
  }
});
