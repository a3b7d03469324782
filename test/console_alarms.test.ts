/**
 * The console's alarm screens in a real browser (headless Chromium driven by playwright-core) against the
 * platform and the IEC 61850 simulator: an alarm defined through the API and raised at the device shows
 * in the banner on every screen and in the alarm list; an operator acknowledges it with a comment; it
 * returns to normal and leaves the list; the journal shows each step once, and its CSV; shelving offers
 * no more than the platform's limit; a viewer sees no action. axe-core finds no serious or critical
 * violation, and no screen scrolls sideways at 390 px or 1280 px. Any console error or CSP violation
 * fails it. Screenshots go to test/output/console/ (git-ignored). Without Chromium it skips, except in CI
 * (@scada/testkit/browser).
 */
import { readFile } from 'node:fs/promises';
import t, { type Test } from 'tap';
import { startSimulator } from '@scada/simulator';
import { FIXTURE_SCL, fixtureModel } from '@scada/testkit/simulator_fixture';
import { startTestPlatform } from '@scada/testkit/platform';
import { createUser, signIn } from '@scada/testkit/session';
import { liveConnection } from '@scada/testkit/live';
import { browserAvailable, startBrowser, type Who } from '@scada/testkit/browser';
import type { Page } from 'playwright-core';

if (browserAvailable(t)) await run();

async function run(): Promise<void> {
  const browser = await startBrowser(t);
  const sim = await startSimulator({ model: await fixtureModel(), port: 0 });
  t.teardown(() => sim.stop());
  const p = await startTestPlatform({ MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '500', ALARM_SHELVE_MAX_MINUTES: '90' });
  t.teardown(() => p.stop());

  // The alarm, defined by an editor through the API on a simulator attribute that a report block sends.
  const editor = await signIn(p, { role: 'editor' });
  const json = { ...editor.headers, 'content-type': 'application/json' };
  const c = await liveConnection(p, sim.port, { scl: FIXTURE_SCL, editor });
  const { projectId } = (await (await c.api('GET', '')).json()) as { projectId: string };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${p.url}${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { id: string };
  };
  const group = await post('/api/alarm-groups', { name: 'Bay 1', projectId, minPriority: 1, maxPriority: 100 });
  await post('/api/alarm-definitions', {
    name: 'Breaker',
    groupId: group.id,
    connectionId: c.id,
    reference: 'SIMLD0/GGIO1.Ind1.stVal[ST]',
    type: 'state',
    alarmWhen: true,
    priority: 5,
    message: 'Breaker tripped at bay 1',
  });
  await c.connect();
  const enabled = await c.api('POST', '/reports', { rcb: 'SIMLD0/LLN0$BR$brcb', triggers: ['dchg'] });
  if (enabled.status !== 204) throw new Error(`enabling reports answered ${enabled.status}`);
  const setBreaker = (on: boolean) => sim.setValue('SIMLD0/GGIO1$ST$Ind1$stVal', { type: 'boolean', value: on });

  /** Checks the screen with axe, at 390 px and 1280 px for sideways scrolling, and saves its screenshots. */
  const check = (t: Test, page: Page, name: string) => browser.check(t, page, name, { widths: [390, 1280] });

  /** A page of its own that records console errors, page errors and CSP violations; signed in as `who`. */
  const open = (t: Test, who: Who) => browser.open(t, { signIn: { url: p.url, who }, acceptDownloads: true });

  t.test('an operator follows an alarm from the banner to the journal', async (t) => {
    const operator = await createUser(p, { role: 'operator' });
    const { page, problems } = await open(t, operator);
    const banner = page.locator('.alarm-banner');
    await banner.getByText('No active alarms').waitFor();

    setBreaker(true);
    await banner.getByText('Priority 5: 1 unacknowledged, 1 active').waitFor();
    t.ok(await banner.getByText('Breaker tripped at bay 1').isVisible(), "the banner shows the newest unacknowledged alarm's text");
    t.equal(await banner.evaluate((el) => getComputedStyle(el).animationName), 'alarm-flash', 'it flashes while unacknowledged');
    await page.emulateMedia({ reducedMotion: 'reduce' });
    t.equal(await banner.evaluate((el) => getComputedStyle(el).animationName), 'none', 'steady for who prefers reduced motion');
    await page.emulateMedia({ reducedMotion: 'no-preference' });

    await banner.getByRole('link').click();
    await page.getByRole('heading', { name: 'Alarms', exact: true }).waitFor();
    t.match(new URL(page.url()).hash, '#/alarms', 'the banner opens the alarm list');
    const row = page.getByRole('row', { name: /Breaker/ });
    await row.getByText('Unacknowledged', { exact: true }).waitFor();
    t.equal(await page.getByRole('button', { name: 'Take out of service Breaker' }).count(), 0, 'out of service is for editors');
    await check(t, page, 'alarms-01-active');

    await row.getByRole('checkbox', { name: 'Select Breaker' }).check();
    await page.getByRole('button', { name: 'Acknowledge selected (1)' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Comment (optional)').fill('crew sent');
    await check(t, page, 'alarms-02-acknowledge');
    await dialog.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    await row.getByText('Acknowledged', { exact: true }).waitFor();
    await banner.getByText('Priority 5: 0 unacknowledged, 1 active').waitFor();
    t.equal(await banner.evaluate((el) => getComputedStyle(el).animationName), 'none', 'acknowledged, the banner stops flashing');

    setBreaker(false);
    await page.getByText('No alarm is active.').waitFor();
    t.equal(await row.count(), 0, 'back to normal, it leaves the list');
    await banner.getByText('No active alarms').waitFor();

    await page.getByRole('link', { name: 'Journal' }).click();
    const transitions = page.locator('table.journal tbody tr');
    await transitions.nth(2).waitFor();
    t.same(
      (await transitions.locator('td.transition').allInnerTexts()).map((text) => text.split('\n')[0]?.trim()),
      ['Normal → Unacknowledged', 'Unacknowledged → Acknowledged', 'Acknowledged → Normal'],
      'the journal shows each step once',
    );
    t.match(
      await transitions.nth(1).textContent(),
      new RegExp(`${operator.username}[\\s\\S]*crew sent`),
      'who acknowledged, and the comment',
    );
    await check(t, page, 'alarms-03-journal');

    await page.getByLabel('Text').fill('crew');
    await page.locator('table.journal tbody tr').filter({ hasText: 'Acknowledged → Normal' }).waitFor({ state: 'detached' });
    t.equal(await transitions.count(), 1, 'the text filter keeps the acknowledgement alone');
    await page.getByLabel('Text').fill('');
    await transitions.nth(2).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    const csv = (await readFile((await download.path()) as string, 'utf8')).trim().split('\r\n');
    t.equal(csv[0], 'seq,alarmId,from,to,at,by,value,comment', 'the CSV has its header');
    t.equal(csv.length, 4, 'and a line for each step');
    t.same(problems, [], 'no console error and no CSP violation');
  });

  t.test('shelving offers no more than the limit; the sound is a choice kept in the browser', async (t) => {
    const operator = await createUser(p, { role: 'operator' });
    const { page, problems } = await open(t, operator);
    const sound = page.getByRole('button', { name: 'Alarm sound' });
    t.equal(await sound.getAttribute('aria-pressed'), 'false', 'the sound is off at first');
    await sound.click();
    t.equal(await sound.getAttribute('aria-pressed'), 'true', 'one click turns it on');
    await page.reload();
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
    t.equal(await sound.getAttribute('aria-pressed'), 'true', 'the choice is kept in this browser');

    setBreaker(true);
    await page.goto(`${p.url}/console/#/alarms`);
    const row = page.getByRole('row', { name: /Breaker/ });
    await row.getByText('Unacknowledged', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Shelve Breaker' }).click();
    const dialog = page.getByRole('dialog');
    const choices = await dialog.getByLabel('Shelve for').locator('option').allInnerTexts();
    t.same(choices, ['15 minutes', '30 minutes', '1 hour', '90 minutes'], 'up to ALARM_SHELVE_MAX_MINUTES (90 here)');
    await dialog.getByLabel('Shelve for').selectOption({ label: '90 minutes' });
    await dialog.getByLabel('Reason').fill('breaker maintenance');
    await dialog.getByRole('button', { name: 'Shelve', exact: true }).click();
    await row.getByText('Shelved', { exact: true }).waitFor();
    await row.getByText(/until .*: breaker maintenance/).waitFor();
    t.pass('until when, and the reason, show');
    await page.locator('.alarm-banner').getByText('No active alarms').waitFor();
    t.pass('a shelved alarm is not counted in the banner');
    await row.getByRole('button', { name: 'Unshelve Breaker' }).click();
    await dialog.getByRole('button', { name: 'Unshelve', exact: true }).click();
    await row.getByText('Unacknowledged', { exact: true }).waitFor();
    await sound.click();
    t.equal(await sound.getAttribute('aria-pressed'), 'false', 'one click mutes it');
    t.same(problems, [], 'no console error and no CSP violation');
  });

  t.test('a viewer sees the alarms but no action', async (t) => {
    const viewer = await createUser(p, { role: 'viewer' });
    const { page, problems } = await open(t, viewer);
    await page.locator('.alarm-banner').getByText('Breaker tripped at bay 1').waitFor();
    await page.getByRole('link', { name: 'Alarms', exact: true }).click();
    const row = page.getByRole('row', { name: /Breaker/ });
    await row.getByText('Unacknowledged', { exact: true }).waitFor();
    t.equal(await page.getByRole('main').getByRole('checkbox').count(), 0, 'no selection');
    t.equal(
      await page
        .getByRole('main')
        .getByRole('button', { name: /Acknowledge|Shelve|service/ })
        .count(),
      0,
      'no action button',
    );
    await check(t, page, 'alarms-04-viewer');
    t.same(problems, [], 'no console error and no CSP violation');
  });
}
