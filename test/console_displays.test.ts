/**
 * Displays in a real browser (headless Chromium driven by playwright-core) against the platform and the
 * IEC 61850 simulator serving the single-line example's model: the example (examples/single_line) loaded
 * through the API draws its dashboard; a breaker changes colour when its position changes at the device,
 * and the same breaker symbol on two boards follows two breakers independently; the load's text follows
 * the device and greys with bad quality; an editor operates a breaker from the drawing through the
 * control dialog; a viewer or an operator finds nothing to click (writes and controls are an editor's). A hostile drawing written into the store directly,
 * past the API's check, is neutralized in the page: no script runs, no dialog opens, nothing is requested
 * from elsewhere. An editor places a board on a dashboard's grid by dragging it, by its corner handle and with
 * the arrow keys, each place saved through the API. axe-core finds no serious or critical violation. Any
 * console error or CSP violation fails it. Without Chromium it skips, except in CI (@scada/testkit/browser).
 */
import { readFile } from 'node:fs/promises';
import t, { type Test } from 'tap';
import { parseScl, utcTimeFromMs } from '@scada/iec61850';
import { startSimulator } from '@scada/simulator';
import { startTestPlatform } from '@scada/testkit/platform';
import { createUser, signIn } from '@scada/testkit/session';
import { until } from '@scada/testkit/live';
import { browserAvailable, startBrowser, type Who } from '@scada/testkit/browser';
import type { Page } from 'playwright-core';
import { loadExample } from '../examples/single_line/load.ts';

if (browserAvailable(t)) await run();

async function run(): Promise<void> {
  const browser = await startBrowser(t);
  const parsed = await parseScl(await readFile(new URL('../examples/single_line/substation.icd', import.meta.url), 'utf8'));
  if (!parsed.ok) throw new Error('the example model does not parse');
  const sim = await startSimulator({ model: parsed.model, port: 0 });
  t.teardown(() => sim.stop());
  const p = await startTestPlatform({ MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '500' });
  t.teardown(() => p.stop());

  const editor = await signIn(p, { role: 'editor' });
  const example = await loadExample(p.url, editor.headers, { host: '127.0.0.1', port: sim.port });
  const start = await fetch(`${p.url}/api/connections/${example.connectionId}/start`, { method: 'POST', headers: editor.headers });
  if (start.status !== 204) throw new Error(`start answered ${start.status}`);
  await until('connected', async () => {
    const res = await fetch(`${p.url}/api/connections/${example.connectionId}/session`, { headers: editor.headers });
    return ((await res.json()) as { state: string }).state === 'connected';
  });

  const D = 'SIMLD0/GGIO1';
  const setPosition = (object: string, on: boolean) => sim.setValue(`${D}$ST$${object}$stVal`, { type: 'boolean', value: on });
  const good = sim.value(`${D}$MX$AnIn1$q`);
  const invalid = { type: 'bit-string', value: { bitLength: 13, bytes: Uint8Array.of(0x40, 0) } } as const;
  const setLoad = (f: number, quality: unknown = good) =>
    sim.setValue(`${D}$MX$AnIn1`, {
      type: 'structure',
      value: [
        { type: 'structure', value: [{ type: 'float', value: f, double: false }] },
        quality as never,
        { type: 'utc-time', value: utcTimeFromMs(Date.now()) },
      ],
    });

  /** Checks the screen with axe, at 390 px and 1280 px for sideways scrolling, and saves its screenshots. */
  const check = (t: Test, page: Page, name: string) => browser.check(t, page, name, { widths: [390, 1280] });

  /** A page signed in as `who` that records console errors, page errors, CSP violations, dialogs and requests elsewhere. */
  const open = async (t: Test, who: Who) => {
    const opened = await browser.open(t, { signIn: { url: p.url, who } });
    const elsewhere = () => opened.requested.filter((url) => !url.startsWith(p.url) && !url.startsWith('data:'));
    return { ...opened, elsewhere };
  };

  /** The fill of an element of a board, by the id the animation gave it. */
  const fillOf = (page: Page, board: string, id: string) =>
    page
      .locator('section.board', { has: page.getByRole('heading', { name: board }) })
      .locator(`[id$="-${id}"]`)
      .evaluate((el) => getComputedStyle(el).fill);
  const rgb = (hex: string) => `rgb(${[1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;
  const red = rgb('#c62828');
  const green = rgb('#2e7d32');

  t.test('an editor watches the example move with the device and operates a breaker from the drawing', async (t) => {
    const engineer = await createUser(p, { role: 'editor' });
    const { page, problems, elsewhere, requested } = await open(t, engineer);
    const displayChunk = (url: string) => /\/console\/assets\/dashboard-[^/]+\.js$/.test(url);
    t.notOk(requested.some(displayChunk), 'the display chunk is not loaded before a display is opened');
    await page.getByRole('link', { name: 'Displays' }).click();
    await page.getByRole('link', { name: 'Single-line example' }).click();
    await page.getByRole('heading', { name: 'Bay 2 breaker' }).waitFor();
    t.ok(requested.some(displayChunk), 'and is loaded when one is');
    const bay1 = page.locator('section.board', { has: page.getByRole('heading', { name: 'Bay 1 breaker' }) });
    await bay1.locator('[id$="-breaker"]').waitFor();
    // Before anything changes at the device, the breakers show the position the report block's general
    // interrogation brought (open), not the grey of a value never received.
    await until('bay 1 drawn open from the first values', async () => (await fillOf(page, 'Bay 1 breaker', 'breaker')) === green);
    t.equal(await fillOf(page, 'Bay 2 breaker', 'breaker'), green, 'bay 2 too');

    setPosition('SPCSO1', true);
    await until('bay 1 closed', async () => (await fillOf(page, 'Bay 1 breaker', 'breaker')) === red);
    t.not(await fillOf(page, 'Bay 2 breaker', 'breaker'), red, 'bay 2 does not follow bay 1');
    t.ok(await bay1.getByText('Closed').isVisible(), 'the position in words');
    t.equal(await bay1.locator('[id$="-label"]').textContent(), 'Q1', "the faceplate's text placeholder, filled by the board");
    setPosition('SPCSO2', true);
    await until('bay 2 closed', async () => (await fillOf(page, 'Bay 2 breaker', 'breaker')) === red);
    setPosition('SPCSO2', false);
    await until('bay 2 open', async () => (await fillOf(page, 'Bay 2 breaker', 'breaker')) === green);
    t.equal(await fillOf(page, 'Bay 1 breaker', 'breaker'), red, 'bay 1 stays closed');
    t.pass('one breaker symbol on two boards follows two breakers');

    setLoad(42.5);
    const load = page.locator('[id$="-load"]').first();
    await until('the load shown', async () => (await load.textContent()) === '42.50 A');
    t.pass("the measurement's text follows the device, with its format and unit");
    t.notOk(await load.evaluate((el) => el.classList.contains('display-bad')), 'good quality is not greyed');
    setLoad(43, invalid);
    await until('greyed', () => load.evaluate((el) => el.classList.contains('display-bad')));
    t.equal(await load.evaluate((el) => getComputedStyle(el).fill), rgb('#595959'), 'bad quality greys the text');
    setLoad(44);
    await until('not greyed', async () => !(await load.evaluate((el) => el.classList.contains('display-bad'))));

    setPosition('Ind1', true);
    const lamp = page.locator('[id$="-lamp"]');
    await until('the lamp blinks', () => lamp.evaluate((el) => el.classList.contains('display-blink')));
    t.equal(await lamp.evaluate((el) => getComputedStyle(el).fill), red, 'the trip lamp is red and blinks while its alarm waits');
    const alarms = (await (await fetch(`${p.url}/api/alarms/active`, { headers: editor.headers })).json()) as { alarmId: string }[];
    await fetch(`${p.url}/api/alarms/${alarms[0]?.alarmId}/ack`, {
      method: 'POST',
      headers: { ...editor.headers, 'content-type': 'application/json' },
      body: '{}',
    });
    await until('steady once acknowledged', async () => !(await lamp.evaluate((el) => el.classList.contains('display-blink'))));

    await check(t, page, 'display-example');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'Operate SIMLD0/GGIO1.SPCSO1' }).click();
    const dialog = page.getByRole('dialog', { name: 'Operate SIMLD0/GGIO1.SPCSO1' });
    await dialog.getByText('direct with normal security').waitFor();
    await dialog.getByLabel('Command').selectOption('false');
    await dialog.getByRole('button', { name: 'Operate' }).click();
    await dialog.getByText('The device carried the command out.').waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    await until('bay 1 open after the control', async () => (await fillOf(page, 'Bay 1 breaker', 'breaker')) === green);
    t.equal(sim.value(`${D}$ST$SPCSO1$stVal`).value, false, 'the device carried it out');
    t.same(problems, [], 'no console error or CSP violation');
    t.same(elsewhere(), [], 'nothing requested from elsewhere');
  });

  for (const [role, a] of [
    ['viewer', 'a'],
    ['operator', 'an'],
  ] as const) {
    t.test(`${a} ${role} sees the display and finds nothing to click (writes and controls are an editor's)`, async (t) => {
      const who = await createUser(p, { role });
      const { page, problems } = await open(t, who);
      await page.goto(`${p.url}/console/#/displays/${example.boardGroupId}`);
      await page.locator('[id$="-breaker"]').first().waitFor();
      t.equal(await page.locator('.display-action').count(), 0, 'no bound element is operable');
      t.equal(await page.getByRole('button', { name: /^Operate/ }).count(), 0);
      t.same(problems, []);
    });
  }

  t.test('a hostile drawing smuggled into the store is neutralized in the page', async (t) => {
    const hostile = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="alert('onload')">
      <script>alert('script'); window.pwned = true;</script>
      <rect id="trap" width="10" height="10" onclick="alert('click')"/>
      <image href="https://evil.example/beacon.png" width="5" height="5"/>
      <use xlink:href="javascript:alert('use')"/>
      <a href="javascript:alert('link')"><text x="1" y="9">x</text></a>
      <foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="https://evil.example/"></iframe></foreignObject>
      <rect id="styled" fill="url(https://evil.example/fill.svg#x)" width="1" height="1"/>
      <animate attributeName="href" to="javascript:alert('animate')"/>
    </svg>`;
    const store = p.proc.store!;
    const { rows } = await store.query<{ space: string; project_id: string }>(
      'select space, project_id from config.animations where id = $1',
      [example.breakerId],
    );
    const row = rows[0]!;
    const id = '0b6b1d0e-2f4a-4c53-9d3e-7a1b2c3d4e5f';
    await store.query(
      `insert into config.animations (space, id, project_id, name, svg, bindings, placeholders, created_by, creation_date, last_modified_by, last_modified_date)
       values ($1, $2, $3, 'Smuggled', $4, $5, '[]', 'intruder', now(), 'intruder', now())`,
      [
        row.space,
        id,
        row.project_id,
        hostile,
        JSON.stringify([
          { elementId: 'trap', source: { connectionId: example.connectionId, reference: `${D}.Ind1.stVal[ST]` }, kind: 'fill' },
        ]),
      ],
    );
    const json = { ...editor.headers, 'content-type': 'application/json' };
    const group = (await (
      await fetch(`${p.url}/api/dashboard`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'Smuggled' }) })
    ).json()) as { id: string };
    const board = await fetch(`${p.url}/api/dashboard/${group.id}/boards`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name: 'Hostile', type: 'Animation', header: true, animationId: id }),
    });
    t.equal(board.status, 200);
    const html = await fetch(`${p.url}/api/dashboard/${group.id}/boards`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        name: 'Hostile HTML',
        type: 'Html',
        header: true,
        x: 0,
        y: 4,
        width: 6,
        height: 2,
        animationParams: `<p>Shift notes</p><img src="x" onerror="alert('img')"><script>alert('html')</script><iframe src="https://evil.example/"></iframe><a href="javascript:alert('a')">link</a>`,
      }),
    });
    t.equal(html.status, 200);

    const operator = await createUser(p, { role: 'operator' });
    const { page, dialogs, elsewhere } = await open(t, operator);
    await page.goto(`${p.url}/console/#/displays/${group.id}`);
    const rect = page.locator('[id$="-trap"]');
    await rect.waitFor({ state: 'attached', timeout: 10_000 }).catch(async (err) => {
      t.comment(await page.locator('main').innerHTML());
      throw err;
    });
    await rect.click({ force: true }).catch(() => {});
    await page.waitForTimeout(300);
    await page.getByText('Shift notes').waitFor();
    t.notMatch(
      await page.locator('.board-html').innerHTML(),
      /onerror|<script|<iframe|javascript:|evil\.example/i,
      'the HTML board holds no script',
    );
    const inserted = await page.locator('.board .animation').innerHTML();
    t.notMatch(
      inserted,
      /<script|onload|onclick|javascript:|foreignObject|evil\.example|<animate|<a /i,
      'nothing hostile reached the page',
    );
    t.notOk(await page.evaluate(() => (window as unknown as { pwned?: boolean }).pwned), 'no script ran');
    t.same(dialogs, [], 'no dialog opened');
    t.same(elsewhere(), [], 'nothing was requested from elsewhere');
  });
  t.test('an editor uploads a drawing, binds an element picked on it, sees it live and saves it', async (t) => {
    const engineer = await createUser(p, { role: 'editor' });
    const { page, problems } = await open(t, engineer);
    await page.goto(`${p.url}/console/#/displays/author`);
    await page.getByRole('button', { name: 'New animation' }).click();
    await page.getByLabel('Animation name').fill('Authored breaker');
    await page.getByLabel('Project').selectOption({ label: 'Single-line example' });
    const svg = await readFile(new URL('../examples/single_line/breaker.svg', import.meta.url));
    await page.getByLabel('SVG file').setInputFiles({ name: 'breaker.svg', mimeType: 'image/svg+xml', buffer: svg });
    await page.getByRole('button', { name: 'closed', exact: true }).waitFor();
    await page.locator('.author-preview [id="author-breaker"]').click();
    await page.getByRole('group', { name: 'Bind element breaker' }).waitFor();
    await page.getByLabel('Connection', { exact: true }).selectOption({ label: 'Substation simulator' });
    await page.getByLabel('Attribute (as reported)').fill(`${D}.SPCSO2.stVal[ST]`);
    await page.getByLabel('Colours by value').fill('true=#c62828, false=#2e7d32');
    await page.getByRole('button', { name: 'Add binding' }).click();
    const preview = page.locator('.author-preview [id="author-breaker"]');
    setPosition('SPCSO2', true);
    await until('the preview moves', async () => (await preview.evaluate((el) => getComputedStyle(el).fill)) === red);
    t.pass('the preview follows the device');
    await check(t, page, 'display-author');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'Save animation' }).click();
    await page.getByText('Saved.').waitFor();
    const listed = (await (
      await fetch(`${p.url}/api/animations/by-project?projectId=${example.projectId}`, { headers: editor.headers })
    ).json()) as { name: string; bindings: unknown[] }[];
    t.match(
      listed.find((a) => a.name === 'Authored breaker'),
      {
        bindings: [
          { elementId: 'breaker', kind: 'fill', source: { connectionId: example.connectionId, reference: `${D}.SPCSO2.stVal[ST]` } },
        ],
      },
      'stored with its binding',
    );

    await page.getByRole('button', { name: 'New animation' }).click();
    await page.getByLabel('Animation name').fill('Hostile');
    await page.getByLabel('Project').selectOption({ label: 'Single-line example' });
    const hostile = '<svg xmlns="http://www.w3.org/2000/svg">\n<rect id="r" width="1" height="1"/>\n<script>alert(1)</script></svg>';
    await page.getByLabel('SVG file').setInputFiles({ name: 'h.svg', mimeType: 'image/svg+xml', buffer: Buffer.from(hostile) });
    await page.getByRole('button', { name: 'r', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Save animation' }).click();
    await page.getByText(/line 3: element <script> is not allowed/).waitFor();
    t.pass("the platform's refusal names the element and line");
    // The browser reports the refused save (400) itself; nothing else may go wrong.
    t.same(
      problems.filter((m) => !/status of 400 .*\/api\/animations\)$/.test(m)),
      [],
    );
  });

  t.test('an editor places boards on the grid by dragging, by the corner handle and with the arrow keys', async (t) => {
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${p.url}${path}`, {
        method: 'POST',
        headers: { ...editor.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await res.json()) as { id: string };
    };
    const group = await post('/api/dashboard', { name: 'Layout', rank: 5 });
    const board = await post(`/api/dashboard/${group.id}/boards`, {
      name: 'Notes to place',
      type: 'Html',
      header: true,
      x: 0,
      y: 0,
      width: 2,
      height: 2,
      animationParams: '<p>Placed by hand.</p>',
    });
    const read = async () =>
      (await (await fetch(`${p.url}/api/dashboard/${group.id}/boards/${board.id}`, { headers: editor.headers })).json()) as {
        x: number;
        y: number;
        width: number;
        height: number;
      };
    const engineer = await createUser(p, { role: 'editor' });
    const { page, problems } = await open(t, engineer);
    await page.goto(`${p.url}/console/#/displays/author`);
    const box = page.getByRole('button', { name: /^Notes to place: column 0, row 0/ });
    await box.waitFor();
    const placed = page.locator('.layout-board', { hasText: 'Notes to place' });
    /** Waits until the board stands still: the page above it may still be growing (its lists arriving). */
    const still = async () => {
      let last = '';
      await until('the layout stands still', async () => {
        const now = JSON.stringify(await placed.boundingBox());
        const same = now === last;
        last = now;
        if (!same) await new Promise((r) => setTimeout(r, 150));
        return same;
      });
    };
    // The mouse acts on the viewport: the board is brought to its middle (the authoring page is long).
    await placed.evaluate((el) => el.scrollIntoView({ block: 'center' }));
    await still();
    const layout = page.locator('.board-layout', { has: box });
    const grid = (await layout.boundingBox()) as { x: number; y: number; width: number; height: number };
    const columns = await layout.evaluate((el) => getComputedStyle(el).gridTemplateColumns.split(' ').length);
    const rows = await layout.evaluate((el) => getComputedStyle(el).gridTemplateRows.split(' ').length);
    const cell = { w: grid.width / columns, h: grid.height / rows };

    // Three cells right and two down, pressed in the board's middle: it snaps to column 3, row 2.
    const from = (await box.boundingBox()) as { x: number; y: number; width: number; height: number };
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    await page.mouse.move(from.x + from.width / 2 + 1.5 * cell.w, from.y + from.height / 2 + cell.h, { steps: 5 });
    await page.mouse.move(from.x + from.width / 2 + 3.2 * cell.w, from.y + from.height / 2 + 1.9 * cell.h, { steps: 5 });
    await page.mouse.up();
    await until('the move is saved', async () => (await read()).x === 3);
    t.match(await read(), { x: 3, y: 2, width: 2, height: 2 }, 'dragged to column 3, row 2, through the API');

    // The corner handle: one cell wider, two higher.
    await placed.evaluate((el) => el.scrollIntoView({ block: 'center' }));
    await still();
    const handle = (await page
      .locator('.layout-board', { has: page.getByText('Notes to place') })
      .locator('.layout-resize')
      .boundingBox()) as {
      x: number;
      y: number;
      width: number;
      height: number;
    };
    await page.mouse.move(handle.x + handle.width / 2, handle.y + handle.height / 2);
    await page.mouse.down();
    await page.mouse.move(handle.x + handle.width / 2 + 1.1 * cell.w, handle.y + handle.height / 2 + 2.2 * cell.h, { steps: 5 });
    await page.mouse.up();
    await until('the resize is saved', async () => (await read()).width === 3);
    t.match(await read(), { x: 3, y: 2, width: 3, height: 4 }, 'resized from its corner');

    // The keyboard: left moves a cell, Shift+Down makes it a row higher.
    await page.getByRole('button', { name: /^Notes to place: column 3, row 2/ }).focus();
    await page.keyboard.press('ArrowLeft');
    await until('the key move is saved', async () => (await read()).x === 2);
    await page.getByRole('button', { name: /^Notes to place: column 2, row 2/ }).waitFor();
    await page.keyboard.press('Shift+ArrowDown');
    await until('the key resize is saved', async () => (await read()).height === 5);
    t.match(await read(), { x: 2, y: 2, width: 3, height: 5 }, 'moved and resized with the keyboard');
    // Keys pressed before the last save came back are each taken, from where the board was sent.
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await until('two quick presses saved', async () => (await read()).x === 4);
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    await until('and two back', async () => (await read()).x === 2);
    await page.getByRole('button', { name: /^Notes to place: column 2, row 2/ }).waitFor();
    t.match(await read(), { x: 2, y: 2, width: 3, height: 5 }, 'no quick press lost');
    const inputs = page.getByRole('group', { name: 'Notes to place (Html)' });
    t.equal(await inputs.getByLabel('x', { exact: true }).inputValue(), '2', 'the place inputs show the new place');
    await check(t, page, 'display-layout');
    t.same(problems, [], 'no console error');
  });

  t.test('values of a connection that stopped are hatched as stale', async (t) => {
    const viewer = await createUser(p, { role: 'viewer' });
    const { page } = await open(t, viewer);
    await page.goto(`${p.url}/console/#/displays/${example.boardGroupId}`);
    const load = page.locator('[id$="-load"]').first();
    await until('a value shown', async () => (await load.textContent()) !== '—');
    const stop = await fetch(`${p.url}/api/connections/${example.connectionId}/stop`, { method: 'POST', headers: editor.headers });
    t.equal(stop.status, 204);
    await until('hatched', () => load.evaluate((el) => el.classList.contains('display-stale')));
    t.pass('the stale value is hatched');
  });
}
