/**
 * The console's trend screen in a real browser (headless Chromium driven by playwright-core) against the
 * platform and the IEC 61850 simulator: a trend of two attributes opened from the live values and the
 * add form draws on a canvas with both listed; where the session was stopped the history answers a gap
 * and the chart holds nulls; the CSV link answers the recorded values; a new value arrives live; a drag
 * zooms and the URL follows; axe finds nothing serious; nothing scrolls sideways at 390 and 1280 px; no
 * console error and no CSP violation. Screenshots go to test/output/console/ (git-ignored).
 */
import t from 'tap';
import { startSimulator } from '@scada/simulator';
import { FIXTURE_SCL, fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform, testAdminPassword } from '@scada/testkit/platform';
import { liveConnection, until } from '@scada/testkit/live';
import { browserAvailable, startBrowser } from '@scada/testkit/browser';

const D = 'SIMLD0';
const analogue = `${D}/GGIO1.AnIn1.mag.f[MX]`;
const status = `${D}/GGIO1.Ind1.stVal[ST]`;

if (browserAvailable(t)) await run();

async function run(): Promise<void> {
  const browser = await startBrowser(t);
  const sim = await startSimulator({ model: await fixtureModel(), port: 0 });
  t.teardown(() => sim.stop());
  const p = await startTestPlatform({ MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '500', MMS_REQUEST_TIMEOUT_MS: '3000' });
  t.teardown(() => p.stop());

  /** Sets AnIn1 on the simulator with the device's time of now, as a device that keeps its clock does. */
  const good = sim.value(`${D}/GGIO1$MX$AnIn1$q`);
  const invalid = { type: 'bit-string', value: { bitLength: 13, bytes: Uint8Array.of(0x40, 0) } } as const;
  const setAnalogue = (value: number, quality: unknown = good) =>
    sim.setValue(`${D}/GGIO1$MX$AnIn1`, {
      type: 'structure',
      value: [
        { type: 'structure', value: [{ type: 'float', value, double: false }] },
        quality as never,
        { type: 'utc-time', value: { seconds: Math.floor(Date.now() / 1000), fraction: 0, quality: 0 } } as never,
      ],
    });

  t.test(`a trend of two attributes with a gap, its CSV, its live tail and its zoom (${p.mode})`, async (t) => {
    // Arrange: values of both attributes before and after a stretch in which the session was stopped.
    const c = await liveConnection(p, sim.port, { scl: FIXTURE_SCL });
    await c.connect();
    const enable = () =>
      c.api('POST', '/reports', { rcb: `${D}/LLN0$RP$urcb01`, generalInterrogation: true, triggers: ['dchg', 'qchg', 'gi'] });
    t.equal((await enable()).status, 204, 'reports enabled');
    const count = async (reference: string) => {
      const s = (await (await c.api('GET', '/history/summary')).json()) as { reference: string; count: number }[];
      return s.find((e) => e.reference === reference)?.count ?? 0;
    };
    const read = () => c.api('POST', '/read', { references: [`${D}/GGIO1$MX$AnIn1$mag$f`, `${D}/GGIO1$ST$Ind1$stVal`] });
    t.equal((await read()).status, 200);
    setAnalogue(10);
    sim.setValue(`${D}/GGIO1$ST$Ind1$stVal`, { type: 'boolean', value: true });
    await until('values before the stop recorded', async () => (await count(analogue)) >= 2 && (await count(status)) >= 2);
    const beforeInvalid = await count(analogue);
    setAnalogue(20, invalid);
    await until('a value of bad quality recorded', async () => (await count(analogue)) > beforeInvalid);
    const history = async () =>
      (await (
        await c.api('GET', `/history?${new URLSearchParams({ reference: analogue, from: new Date(Date.now() - 600_000).toISOString() })}`)
      ).json()) as { points: unknown[]; gaps: { reason: string }[] };
    t.equal((await c.api('POST', '/stop')).status, 204);
    await until('stopped', async () => (await c.session()).state === 'stopped');
    // The session restarts once the history holds its stop: a gap is open from there until now.
    await until('the stop recorded as an open gap', async () => (await history()).gaps.some((g) => g.reason.startsWith('stopped')));
    await c.connect();
    await enable();
    const before = { a: await count(analogue), s: await count(status) };
    t.equal((await read()).status, 200);
    setAnalogue(30);
    await until('values after the restart recorded', async () => (await count(analogue)) > before.a && (await count(status)) > before.s);
    const answer = await history();
    t.ok(answer.gaps.length >= 1, `the history answers the stop as a gap (${answer.gaps.map((g) => g.reason).join(', ')})`);

    // Act: sign in, open the trend of AnIn1 from the live values, add Ind1 with the form.
    const { page, context, problems } = await browser.open(t, {
      signIn: { url: p.url, who: { username: 'admin', password: testAdminPassword } },
    });
    await page.goto(`${p.url}/console/#/connections/${c.id}/model`);
    for (const name of [D, 'GGIO1', /^Ind1/]) await page.getByRole('button', { name, exact: true }).first().click();
    const fromModel = await page.getByRole('link', { name: `Trend of ${status}` }).getAttribute('href');
    t.match(decodeURIComponent(fromModel ?? ''), `s=${c.id}:${status}`, 'the model offers the trend of a status attribute');
    await page.goto(`${p.url}/console/#/connections/${c.id}/values`);
    await page.getByRole('link', { name: `Trend of ${analogue}` }).click();
    await page.getByRole('heading', { name: 'Trends' }).waitFor();
    const rows = page.locator('table.trend-series tbody tr');
    await rows.filter({ hasText: analogue }).waitFor();
    await page.getByLabel('Attribute', { exact: true }).selectOption(status);
    await page.getByRole('button', { name: 'Add to the chart' }).click();
    await rows.filter({ hasText: status }).waitFor();
    await page.locator('.trend-chart[data-loading="false"][data-series="2"]').waitFor();

    // Assert: drawn, listed, broken at the gap.
    t.equal(await page.locator('.trend-chart canvas').count(), 1, 'the chart is drawn on a canvas');
    t.equal(await rows.count(), 2, 'both attributes are listed');
    for (const reference of [analogue, status]) {
      const row = rows.filter({ hasText: reference });
      const points = Number(await row.getAttribute('data-points'));
      const nulls = Number(await row.getAttribute('data-nulls'));
      t.ok(points >= 2, `${reference}: ${points} points on the chart`);
      t.ok(nulls >= 1, `${reference}: ${nulls} null points where the session was down`);
      t.match(await row.textContent(), /gap/, `${reference}: the list says there was a gap`);
    }
    t.match(await rows.filter({ hasText: analogue }).textContent(), /[1-9]\d* of bad quality/, 'the values of bad quality are counted');
    const url = new URL(page.url());
    t.match(decodeURIComponent(url.hash), new RegExp(`s=${c.id}:${D}/GGIO1\\.Ind1\\.stVal\\[ST\\]`), 'the URL holds the selection');
    t.match(url.hash, /range=1h/, 'and the range');

    const csv = await page.getByRole('link', { name: `CSV of ${analogue}` }).getAttribute('href');
    const got = await context.request.get(`${p.url}${csv}`);
    t.equal(got.status(), 200, 'the CSV link answers');
    t.match(got.headers()['content-type'], /text\/csv/);
    const lines = (await got.text()).trim().split('\r\n');
    t.equal(lines[0], 't,receivedAt,timestamp,value,validity,quality,rcb,seqNum', 'with its header');
    t.ok(lines.length - 1 >= 2, `and the recorded values (${lines.length - 1})`);

    // The live tail: a new value is added while the period ends now.
    const analogueRow = rows.filter({ hasText: analogue });
    const pointsBefore = Number(await analogueRow.getAttribute('data-points'));
    setAnalogue(77);
    await analogueRow.filter({ hasText: '77' }).waitFor();
    await until('the new value drawn', async () => Number(await analogueRow.getAttribute('data-points')) > pointsBefore);
    t.pass('the new value arrives from the live channel as a new point of the chart');

    const check = (name: string) => browser.check(t, page, name, { sideways: true });
    await check('20-trend');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('.trend-chart canvas').waitFor();
    await check('21-trend-phone');
    await page.setViewportSize({ width: 1280, height: 800 });

    // Zoom: a drag across the chart shows that period, named in the URL.
    const over = page.locator('.trend-chart .u-over');
    const box = await over.boundingBox();
    if (!box) throw new Error('the chart has no drawing area');
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.9, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction(() => location.hash.includes('from='));
    t.notOk(await page.getByRole('button', { name: 'Back to now' }).isDisabled(), 'a zoomed period can go back to now');
    await page.getByRole('button', { name: 'Back to now' }).click();
    await page.waitForFunction(() => location.hash.includes('range=1h'));
    t.pass('a drag zooms, and back to now follows again');
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -200);
    await page.keyboard.up('Control');
    await page.waitForFunction(() => location.hash.includes('from='));
    t.pass('Ctrl + wheel zooms too');
    t.same(problems, [], 'no console error and no CSP violation');
  });
}
