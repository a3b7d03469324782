/**
 * Animations through the gateway: an SVG drawing and its bindings, created, read, listed (by project too),
 * replaced and deleted; the SVG checked at save against an allow list, each hostile form refused with 400
 * naming the element and its line and nothing stored; an SVG of up to 2 MiB stored and read back whole
 * (more than one bus message carries: it travels staged), one byte more 413; the element count bounded;
 * bindings that name no element of the drawing or an unlisted placeholder refused; a viewer reads and may
 * not write.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';
import { signIn, type SignedIn } from '@scada/testkit/session';

const p = await startTestPlatform();
t.teardown(() => p.stop());

const editor = await signIn(p, { role: 'editor' });
const viewer = await signIn(p, { role: 'viewer' });

async function api(who: SignedIn, method: string, path: string, body?: unknown) {
  const res = await fetch(`${p.url}${path}`, {
    method,
    headers: { ...who.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null } as { status: number; body: any };
}

const project = (await api(editor, 'POST', '/api/projects', { name: 'displays', isActive: true })).body as { id: string };
const connectionId = '3f1c2a7e-6b8d-4c1e-9a2f-5d6e7f8a9b0c';

const drawing = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 200 100">
  <defs><linearGradient id="g"><stop offset="0" stop-color="#ffffff"/></linearGradient></defs>
  <rect id="breaker" x="10" y="10" width="40" height="40" fill="url(#g)" stroke="#000000"/>
  <text id="value" x="60" y="30" font-size="12">0</text>
  <use xlink:href="#breaker" x="100"/>
  <image href="data:image/png;base64,iVBORw0KGgo=" x="0" y="0" width="1" height="1"/>
</svg>`;

const animation = (svg: string, extra: Record<string, unknown> = {}) => ({
  name: `a-${Math.random().toString(36).slice(2)}`,
  projectId: project.id,
  svg,
  bindings: [],
  placeholders: [],
  ...extra,
});

t.test('an animation is created, read, listed, replaced and deleted', async (t) => {
  const bindings = [
    { elementId: 'breaker', source: { placeholder: 'breaker' }, kind: 'fill', colors: { '1': '#00aa00', '2': '#cc0000' } },
    { elementId: 'value', source: { connectionId, reference: 'LD0/MMXU1.TotW.mag.f[MX]' }, kind: 'text', format: '0.0', unit: 'kW' },
  ];
  const created = await api(editor, 'POST', '/api/animations', { ...animation(drawing), name: 'Bay', bindings, placeholders: ['breaker'] });
  t.equal(created.status, 200, JSON.stringify(created.body));
  t.match(created.body, {
    name: 'Bay',
    projectId: project.id,
    svg: drawing,
    bindings,
    placeholders: ['breaker'],
    createdBy: editor.username,
  });
  const id = created.body.id as string;
  t.same((await api(viewer, 'GET', `/api/animations/${id}`)).body, created.body);
  t.match((await api(viewer, 'GET', '/api/animations')).body, [{ id }]);
  t.match((await api(viewer, 'GET', `/api/animations/by-project?projectId=${project.id}`)).body, [{ id }]);
  const missingProject = await api(viewer, 'GET', `/api/animations/by-project?projectId=${connectionId}`);
  t.equal(missingProject.status, 404);

  t.equal((await api(viewer, 'PUT', `/api/animations/${id}`, { ...created.body, id: undefined })).status, 403);
  const replaced = await api(editor, 'PUT', `/api/animations/${id}`, {
    name: 'Bay 2',
    projectId: project.id,
    svg: drawing,
    bindings: [],
    placeholders: [],
  });
  t.equal(replaced.status, 204, JSON.stringify(replaced.body));
  t.match((await api(viewer, 'GET', `/api/animations/${id}`)).body, { name: 'Bay 2', bindings: [] });

  const blocked = await api(editor, 'DELETE', `/api/projects/${project.id}`);
  t.equal(blocked.status, 409, 'a project with animations is not deleted');
  t.equal((await api(editor, 'DELETE', `/api/animations/${id}`)).status, 204);
  t.equal((await api(viewer, 'GET', `/api/animations/${id}`)).status, 404);
});

/** Each hostile document, the words its refusal names, and the line it names. */
const hostile: [string, string, RegExp][] = [
  ['a script element', '<svg xmlns="http://www.w3.org/2000/svg">\n<script>alert(1)</script></svg>', /line 2: element <script>/],
  [
    'an onload handler',
    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
    /line 1: attribute onload of <svg> is an event handler/,
  ],
  ['an onclick on a shape', '<svg xmlns="http://www.w3.org/2000/svg">\n\n<rect ONCLICK="x()"/></svg>', /line 3: attribute ONCLICK/],
  [
    'javascript: in href',
    '<svg xmlns="http://www.w3.org/2000/svg">\n<use href="javascript:alert(1)"/></svg>',
    /line 2: attribute href of <use> holds a javascript: URL/,
  ],
  [
    'javascript: in xlink:href, hidden by a character reference',
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">\n<use xlink:href="&#106;ava&#x09;script:alert(1)"/></svg>',
    /line 2: attribute xlink:href of <use> holds a javascript: URL/,
  ],
  ['a link element', '<svg xmlns="http://www.w3.org/2000/svg"><a href="#x"><rect/></a></svg>', /element <a> is not allowed/],
  [
    'an external reference',
    '<svg xmlns="http://www.w3.org/2000/svg">\n<image href="https://evil.example/x.png"/></svg>',
    /line 2: attribute href of <image> refers outside the document/,
  ],
  [
    'an SVG data URL in an image',
    '<svg xmlns="http://www.w3.org/2000/svg"><image href="data:image/svg+xml;base64,PHN2Zz4="/></svg>',
    /attribute href of <image> refers outside the document/,
  ],
  ['a data: URL in use', '<svg xmlns="http://www.w3.org/2000/svg"><use href="data:text/html,x"/></svg>', /refers outside the document/],
  [
    'foreignObject',
    '<svg xmlns="http://www.w3.org/2000/svg">\n<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject></svg>',
    /line 2: element <foreignObject> is not allowed/,
  ],
  [
    'CSS url() in a style attribute',
    '<svg xmlns="http://www.w3.org/2000/svg"><rect style="fill: url(https://evil.example/)"/></svg>',
    /attribute style of <rect> holds CSS url\(\)/,
  ],
  [
    'CSS url() in a style element',
    '<svg xmlns="http://www.w3.org/2000/svg"><style>\nrect { background: url(https://evil.example/) }</style></svg>',
    /<style> holds CSS url\(\)/,
  ],
  [
    'a remote url() in a presentation attribute',
    '<svg xmlns="http://www.w3.org/2000/svg"><rect fill="url(https://evil.example/#g)"/></svg>',
    /attribute fill of <rect> holds a url\(\) other than #id/,
  ],
  [
    'a DOCTYPE with an entity declaration',
    '<?xml version="1.0"?>\n<!DOCTYPE svg [<!ENTITY x "<script>alert(1)</script>">]>\n<svg xmlns="http://www.w3.org/2000/svg">&x;</svg>',
    /a <!DOCTYPE is not allowed/,
  ],
  [
    'an external entity',
    '<!DOCTYPE svg SYSTEM "file:///etc/passwd"><svg xmlns="http://www.w3.org/2000/svg"/>',
    /a <!DOCTYPE is not allowed/,
  ],
  ['an undeclared entity', '<svg xmlns="http://www.w3.org/2000/svg"><text>&xxe;</text></svg>', /malformed XML: undefined entity/],
  [
    'a stylesheet processing instruction',
    '<?xml-stylesheet href="https://evil.example/x.css"?><svg xmlns="http://www.w3.org/2000/svg"/>',
    /processing instruction <\?xml-stylesheet\?>/,
  ],
  [
    'an animation that sets href',
    '<svg xmlns="http://www.w3.org/2000/svg"><set attributeName="href" to="javascript:x"/></svg>',
    /element <set>/,
  ],
  ['an HTML root', '<html><body onload="x()"/></html>', /the root element is <html>/],
  ['an iframe in the SVG namespace', '<svg xmlns="http://www.w3.org/2000/svg"><iframe src="https://x"/></svg>', /element <iframe>/],
  ['not XML at all', '<svg xmlns="http://www.w3.org/2000/svg"><rect></svg>', /malformed XML/],
];

t.test('hostile SVG is refused at save, naming the element and line, and nothing is stored', async (t) => {
  const before = (await api(viewer, 'GET', '/api/animations')).body.length as number;
  for (const [what, svg, named] of hostile) {
    const res = await api(editor, 'POST', '/api/animations', animation(svg));
    t.equal(res.status, 400, what);
    t.match(res.body, { code: 'validation_failed', detail: named, errors: [{ path: '/body/svg' }] }, what);
  }
  const existing = await api(editor, 'POST', '/api/animations', animation(drawing));
  const replaced = await api(editor, 'PUT', `/api/animations/${existing.body.id}`, animation(hostile[0]?.[1] as string));
  t.equal(replaced.status, 400, 'a replacement is checked as a creation is');
  t.equal((await api(viewer, 'GET', `/api/animations/${existing.body.id}`)).body.svg, drawing, 'the stored drawing is unchanged');
  t.equal((await api(viewer, 'GET', '/api/animations')).body.length, before + 1, 'no refused animation was stored');
});

/**
 * An SVG of exactly `bytes` UTF-8 bytes whose bulk is an embedded PNG's base64 (random bytes): it hardly
 * compresses, so neither the request nor the answer fits one bus message even compressed. A `€` (three
 * bytes, one character) makes bytes and characters differ.
 */
function svgOfBytes(bytes: number): string {
  const head = '<svg xmlns="http://www.w3.org/2000/svg"><title>€</title><image id="photo" href="data:image/png;base64,';
  const tail = '" width="10" height="10"/></svg>';
  const room = bytes - Buffer.byteLength(head + tail);
  const data = randomBytes(Math.ceil(room / 4) * 3)
    .toString('base64')
    .slice(0, room);
  const svg = `${head}${data}${tail}`;
  if (Buffer.byteLength(svg) !== bytes) throw new Error('the SVG is not of the size asked');
  return svg;
}

const mib = 1024 * 1024;

t.test('an SVG of exactly 2 MiB is stored and read back whole; one byte more is 413', async (t) => {
  // On NATS the server carries 1 MiB a message (its default, as CI's runs): what follows crosses it.
  t.ok(p.proc.bus.maxPayload <= mib, `one bus message carries ${p.proc.bus.maxPayload} bytes`);
  const before = (await api(viewer, 'GET', '/api/animations')).body.length as number;
  const svg = svgOfBytes(2 * mib);
  const bindings = [{ elementId: 'photo', source: { connectionId, reference: 'LD0/XCBR1.Pos.stVal[ST]' }, kind: 'visibility' }];
  const created = await api(editor, 'POST', '/api/animations', animation(svg, { bindings }));
  t.equal(created.status, 200, JSON.stringify(created.body)?.slice(0, 300));
  t.equal(created.body.svg, svg, 'the answer to the create holds the SVG whole');
  const read = await api(viewer, 'GET', `/api/animations/${created.body.id}`);
  t.equal(read.status, 200);
  t.equal(read.body.svg, svg, 'read back byte for byte');
  t.same(read.body.bindings, bindings);
  const listed = (await api(viewer, 'GET', '/api/animations')).body as { id: string; svg: string }[];
  t.equal(listed.find((a) => a.id === created.body.id)?.svg, svg, 'the list holds it whole too');

  const other = svgOfBytes(2 * mib);
  const replaced = await api(editor, 'PUT', `/api/animations/${created.body.id}`, animation(other, { name: created.body.name }));
  t.equal(replaced.status, 204, 'a replacement of 2 MiB passes');
  t.equal((await api(viewer, 'GET', `/api/animations/${created.body.id}`)).body.svg, other);

  const over = await api(editor, 'POST', '/api/animations', animation(svgOfBytes(2 * mib + 1)));
  t.equal(over.status, 413, 'one byte past 2 MiB');
  t.match(over.body, { code: 'payload_too_large', detail: /2097153 bytes/ });
  const overReplace = await api(editor, 'PUT', `/api/animations/${created.body.id}`, animation(svgOfBytes(2 * mib + 1)));
  t.equal(overReplace.status, 413, 'a replacement one byte past 2 MiB');
  t.equal((await api(viewer, 'GET', `/api/animations/${created.body.id}`)).body.svg, other, 'the stored SVG is unchanged');
  t.equal((await api(viewer, 'GET', '/api/animations')).body.length, before + 1, 'nothing refused was stored');
});

t.test('the body bound of animations is their own; every other route keeps 1 MiB', async (t) => {
  const huge = await api(
    editor,
    'POST',
    '/api/animations',
    animation(`<svg xmlns="http://www.w3.org/2000/svg"><desc>${'x'.repeat(6 * mib)}</desc></svg>`),
  );
  t.equal(huge.status, 413, 'a body past 6 MiB is refused unread');
  t.equal(huge.body.code, 'payload_too_large');
  const project = await api(editor, 'POST', '/api/projects', { name: 'big', isActive: true, dsc: 'x'.repeat(1.5 * mib) });
  t.equal(project.status, 413, 'a project of 1.5 MiB is past the standard bound');
});

t.test('the element count is bounded', async (t) => {
  const before = (await api(viewer, 'GET', '/api/animations')).body.length as number;
  const many = (n: number) => `<svg xmlns="http://www.w3.org/2000/svg">${'<g/>'.repeat(n - 1)}</svg>`;
  const tooMany = await api(editor, 'POST', '/api/animations', animation(many(20_001)));
  t.equal(tooMany.status, 400);
  t.match(tooMany.body.detail, /more than 20000 elements/);
  t.equal((await api(editor, 'POST', '/api/animations', animation(many(20_000)))).status, 200, '20,000 elements pass');
  t.equal((await api(viewer, 'GET', '/api/animations')).body.length, before + 1);
});

t.test('bindings fit the drawing and the placeholders the animation lists', async (t) => {
  const noElement = await api(
    editor,
    'POST',
    '/api/animations',
    animation(drawing, { bindings: [{ elementId: 'nope', source: { connectionId, reference: 'a/b.c[ST]' }, kind: 'text' }] }),
  );
  t.equal(noElement.status, 400);
  t.match(noElement.body, { detail: /no element with id "nope"/, errors: [{ path: '/body/bindings/0/elementId' }] });
  const unlisted = await api(
    editor,
    'POST',
    '/api/animations',
    animation(drawing, { bindings: [{ elementId: 'breaker', source: { placeholder: 'other' }, kind: 'fill' }] }),
  );
  t.equal(unlisted.status, 400);
  t.match(unlisted.body.detail, /placeholder "other" is not among/);
  const noRange = await api(
    editor,
    'POST',
    '/api/animations',
    animation(drawing, { bindings: [{ elementId: 'breaker', source: { connectionId, reference: 'a/b.c[MX]' }, kind: 'rotate' }] }),
  );
  t.match(noRange, { status: 400, body: { detail: /needs a range/ } });
  const badKind = await api(
    editor,
    'POST',
    '/api/animations',
    animation(drawing, { bindings: [{ elementId: 'breaker', source: { connectionId, reference: 'x' }, kind: 'explode' }] }),
  );
  t.equal(badKind.status, 400);
  const badColor = await api(
    editor,
    'POST',
    '/api/animations',
    animation(drawing, {
      bindings: [{ elementId: 'breaker', source: { placeholder: 'b' }, kind: 'fill', thresholds: [{ at: 1, color: 'red' }] }],
      placeholders: ['b'],
    }),
  );
  t.equal(badColor.status, 400);
});

t.test("an animation may draw a faceplate: its bindings name the faceplate's placeholders", async (t) => {
  const faceplate = await api(editor, 'POST', '/api/faceplates', { name: 'Breaker', projectId: project.id });
  t.equal(faceplate.status, 200);
  const placeholder = await api(editor, 'POST', `/api/faceplates/${faceplate.body.id}/placeholders`, { name: 'position', type: 'tag' });
  t.equal(placeholder.status, 200);
  const symbol = animation(drawing, {
    faceplateId: faceplate.body.id,
    bindings: [{ elementId: 'breaker', source: { placeholder: 'position' }, kind: 'fill', colors: { true: '#c62828' } }],
  });
  const created = await api(editor, 'POST', '/api/animations', symbol);
  t.equal(created.status, 200, JSON.stringify(created.body));
  t.equal(created.body.faceplateId, faceplate.body.id);
  const unknown = await api(editor, 'POST', '/api/animations', {
    ...symbol,
    bindings: [{ elementId: 'breaker', source: { placeholder: 'other' }, kind: 'fill' }],
  });
  t.match(unknown, { status: 400, body: { detail: /placeholder "other" is not among the animation's placeholders or its faceplate's/ } });
  const missing = await api(editor, 'POST', '/api/animations', { ...symbol, faceplateId: connectionId });
  t.equal(missing.status, 404, 'a faceplate the space does not have');
  t.equal((await api(editor, 'DELETE', `/api/faceplates/${faceplate.body.id}/placeholders/${placeholder.body.id}`)).status, 204);
  const drawn = await api(editor, 'DELETE', `/api/faceplates/${faceplate.body.id}`);
  t.equal(drawn.status, 409, 'a faceplate an animation draws is not deleted');
  t.match(drawn.body.detail, /animation/);
});
