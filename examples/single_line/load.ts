/**
 * The single-line-diagram example, posted through the public API: a project, a connection to the
 * simulator serving `substation.icd`, an alarm on the trip indication, two animations (the incoming
 * feeder, and a breaker symbol drawing the faceplate `Breaker`, whose placeholders are a position and a label) and a dashboard of four boards: the feeder, the breaker
 * symbol twice (bay 1 on SPCSO1, bay 2 on SPCSO2: one symbol, two independent breakers) and a note.
 *
 *   npx tsx simulator/src/main.ts examples/single_line/substation.icd --port 10102   # the device
 *   npm run example -- --user admin --password '…'                                  # the displays
 *
 * Options: `--url` [http://127.0.0.1:8081], `--device` [127.0.0.1:10102], `--space` (the space the user
 * signs in to when left out). Run it again and it answers 409 on the project's name: delete the project first.
 */
import { existsSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

const here = new URL('.', import.meta.url);
const D = 'SIMLD0/GGIO1';

/** What the example created. */
export type LoadedExample = { projectId: string; connectionId: string; boardGroupId: string; substationId: string; breakerId: string };

/** Calls the API with the caller's headers; throws with the answer when it is not the expected status. */
function caller(url: string, headers: Record<string, string>) {
  return async <T>(method: string, path: string, body?: unknown, form?: FormData): Promise<T> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: form || body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: form ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
    return (text ? JSON.parse(text) : null) as T;
  };
}

/** Posts the example; `device` is where the simulator listens. Answers the ids it created. */
export async function loadExample(
  url: string,
  headers: Record<string, string>,
  device = { host: '127.0.0.1', port: 10102 },
): Promise<LoadedExample> {
  const call = caller(url, headers);
  const read = (name: string) => readFile(new URL(name, here), 'utf8');
  const project = await call<{ id: string }>('POST', '/api/projects', { name: 'Single-line example', isActive: true });
  const form = new FormData();
  form.set(
    'connection',
    JSON.stringify({ name: 'Substation simulator', ip: device.host, port: device.port, projectId: project.id, protocol: 'IEC 61850' }),
  );
  form.set('file', new Blob([await read('substation.icd')], { type: 'application/xml' }), 'substation.icd');
  const connection = await call<{ id: string }>('POST', '/api/protocols/iec61850/connections/with-file', undefined, form);
  const c = connection.id;
  // Kept enabled by the platform from the session's start on, with a general interrogation for the first values.
  await call('POST', `/api/connections/${c}/reports`, {
    rcb: 'SIMLD0/LLN0$BR$brcb',
    triggers: ['dchg', 'qchg', 'gi'],
    generalInterrogation: true,
  });
  const group = await call<{ id: string }>('POST', '/api/alarm-groups', {
    name: 'Substation',
    projectId: project.id,
    minPriority: 1,
    maxPriority: 100,
  });
  await call('POST', '/api/alarm-definitions', {
    name: 'Feeder trip',
    groupId: group.id,
    connectionId: c,
    reference: `${D}.Ind1.stVal[ST]`,
    type: 'state',
    alarmWhen: true,
    priority: 5,
    message: 'Incoming feeder tripped',
  });
  const at = (reference: string) => ({ connectionId: c, reference });
  const substation = await call<{ id: string }>('POST', '/api/animations', {
    name: 'Incoming feeder',
    projectId: project.id,
    dsc: 'Busbar, disconnector, trip lamp and load of the simulator',
    svg: await read('substation.svg'),
    placeholders: [],
    bindings: [
      { elementId: 'load', source: at(`${D}.AnIn1.mag.f[MX]`), kind: 'text', format: '0.00', unit: 'A' },
      { elementId: 'lamp', source: at(`${D}.Ind1.stVal[ST]`), kind: 'fill', colors: { true: '#c62828', false: '#2e7d32' } },
      { elementId: 'lamp', source: at(`${D}.Ind1.stVal[ST]`), kind: 'blink' },
      {
        elementId: 'disconnector',
        source: at(`${D}.SPCSO3.stVal[ST]`),
        kind: 'rotate',
        range: { in: [0, 1], out: [-40, 0] },
        action: 'control',
      },
      { elementId: 'load-pointer', source: at(`${D}.AnIn1.mag.f[MX]`), kind: 'translate', range: { in: [0, 100], out: [0, 360] } },
      {
        elementId: 'load-bar',
        source: at(`${D}.AnIn1.mag.f[MX]`),
        kind: 'fill',
        thresholds: [
          { at: 0, color: '#0b5cad' },
          { at: 80, color: '#a4161a' },
        ],
      },
    ],
  });
  // The breaker symbol is a faceplate: its placeholders (the position to follow, the label to show) are
  // filled per board, so one drawing serves every bay.
  const faceplate = await call<{ id: string }>('POST', '/api/faceplates', { name: 'Breaker', projectId: project.id });
  await call('POST', `/api/faceplates/${faceplate.id}/placeholders`, { name: 'position', type: 'tag', order: 1 });
  await call('POST', `/api/faceplates/${faceplate.id}/placeholders`, { name: 'label', type: 'text', order: 2 });
  const breaker = await call<{ id: string }>('POST', '/api/animations', {
    name: 'Breaker symbol',
    projectId: project.id,
    faceplateId: faceplate.id,
    dsc: 'One circuit breaker, drawing the faceplate Breaker: its placeholders are the position and the label',
    svg: await read('breaker.svg'),
    placeholders: [],
    bindings: [
      { elementId: 'label', source: { placeholder: 'label' }, kind: 'text' },
      {
        elementId: 'breaker',
        source: { placeholder: 'position' },
        kind: 'fill',
        colors: { true: '#c62828', false: '#2e7d32' },
        action: 'control',
      },
      { elementId: 'closed', source: { placeholder: 'position' }, kind: 'visibility', visibleWhen: true },
      { elementId: 'open', source: { placeholder: 'position' }, kind: 'visibility', visibleWhen: false },
    ],
  });
  const boardGroup = await call<{ id: string }>('POST', '/api/dashboard', { name: 'Single-line example', rank: 0 });
  const boards = `/api/dashboard/${boardGroup.id}/boards`;
  await call('POST', boards, {
    name: 'Incoming feeder',
    type: 'Animation',
    header: true,
    x: 0,
    y: 0,
    width: 8,
    height: 6,
    animationId: substation.id,
  });
  for (const [i, name, object, label] of [
    [0, 'Bay 1 breaker', 'SPCSO1', 'Q1'],
    [1, 'Bay 2 breaker', 'SPCSO2', 'Q2'],
  ] as const) {
    await call('POST', boards, {
      name,
      type: 'Animation',
      header: true,
      x: 8 + 2 * i,
      y: 0,
      width: 2,
      height: 4,
      animationId: breaker.id,
      animationParams: JSON.stringify({ position: at(`${D}.${object}.stVal[ST]`), label }),
    });
  }
  await call('POST', boards, {
    name: 'Notes',
    type: 'Html',
    header: true,
    x: 8,
    y: 4,
    width: 4,
    height: 2,
    animationParams: '<p>Red: closed, green: open. Click a breaker or the disconnector to operate it.</p>',
  });
  return { projectId: project.id, connectionId: c, boardGroupId: boardGroup.id, substationId: substation.id, breakerId: breaker.id };
}

/** `npm run example`: signs in, loads the example, starts the connection, and says where to look. */
async function main(): Promise<void> {
  const { parseArgs } = await import('node:util');
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: 'http://127.0.0.1:8081' },
      user: { type: 'string', default: 'admin' },
      password: { type: 'string' },
      device: { type: 'string', default: '127.0.0.1:10102' },
      space: { type: 'string' },
    },
  });
  if (!values.password) throw new Error('--password is required (the user signs in to post the example)');
  const signIn = () =>
    fetch(`${values.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: values.user, password: values.password }),
    }).catch(() => {
      throw new Error(`The platform does not answer at ${values.url}: start it (npm start) or pass --url`);
    });
  // A busy machine can hash the password past the gateway's deadline (504) or have its checks queued full
  // (503): tried again a few times, as a person at the sign-in page would.
  let login = await signIn();
  for (let attempt = 1; attempt < 5 && (login.status === 503 || login.status === 504); attempt++) {
    await login.body?.cancel();
    await new Promise((r) => setTimeout(r, 1000 * Number(login.headers.get('retry-after') ?? 1)));
    login = await signIn();
  }
  if (login.status !== 200) throw new Error(`signing in answered ${login.status}: ${await login.text()}`);
  const { access_token } = (await login.json()) as { access_token: string };
  const headers: Record<string, string> = { authorization: `Bearer ${access_token}`, ...(values.space ? { 'x-space': values.space } : {}) };
  const [host = '127.0.0.1', port = '10102'] = values.device.split(':');
  const loaded = await loadExample(values.url, headers, { host, port: Number(port) });
  await caller(values.url, headers)('POST', `/api/connections/${loaded.connectionId}/start`);
  process.stdout.write(`Loaded. Open ${values.url}/console/#/displays/${loaded.boardGroupId}\n`);
}

// Run as a command (not imported): the file node was started with, its links followed as Node follows them.
const entry = process.argv[1];
if (entry && existsSync(entry) && import.meta.url === pathToFileURL(realpathSync(entry)).href) {
  main().catch((err: Error) => {
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 1;
  });
}
