/**
 * The engineer's console in a real browser (headless Chromium driven by playwright-core) against the
 * platform and the IEC 61850 simulator: sign in, pick the space, create a connection with its SCL file,
 * start the session, browse, see a reported value change arrive, write (refused, then taken), operate
 * with select-before-operate, find it in the control log, sign out. Any console error or CSP violation
 * fails it; axe-core finds no serious or critical violation on any screen. Screenshots of each screen go
 * to test/output/console/ (git-ignored). Without Chromium it skips, except in CI (@scada/testkit/browser).
 */
import { readFile } from 'node:fs/promises';
import t from 'tap';
import { initialBudgetBytes } from '@scada/console/build';
import { startSimulator, type Faults } from '@scada/simulator';
import { FIXTURE_SCL, fixtureModel } from '@scada/testkit/simulator_fixture';
import { utcTimeFromMs } from '@scada/iec61850';
import { generateSync } from 'otplib';
import { startTestPlatform, testAdminPassword } from '@scada/testkit/platform';
import { asAdmin, createUser } from '@scada/testkit/session';
import { liveConnection } from '@scada/testkit/live';
import { browserAvailable, startBrowser } from '@scada/testkit/browser';

if (browserAvailable(t)) await run();

async function run(): Promise<void> {
  const { built, open, check } = await startBrowser(t);
  const faults: Faults = {};
  const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults });
  t.teardown(() => sim.stop());
  const p = await startTestPlatform({ MMS_RECONNECT_MIN_MS: '100', MMS_RECONNECT_MAX_MS: '500', MMS_REQUEST_TIMEOUT_MS: '3000' });
  t.teardown(() => p.stop());
  // Asserted once everything is started, with the subtests queued right after it: a file's test whose
  // teardowns are set ends by itself once idle, which it would be while the platform starts.
  t.ok(
    built.initialGzipBytes <= initialBudgetBytes,
    `the initial bundle is ${(built.initialGzipBytes / 1024).toFixed(1)} KB gzipped, within ${initialBudgetBytes / 1024} KB`,
  );

  t.test(`the whole flow in the console (${p.mode})`, async (t) => {
    const { page, problems, expectedRefusals } = await open(t);

    const screen = (name: string) => check(t, page, name);
    const button = (name: string | RegExp) => page.getByRole('button', { name });
    const summary = (text: string) => page.getByRole('button', { name: text, exact: true }).first();

    const root = await page.goto(`${p.url}/`);
    t.equal(new URL(page.url()).pathname, '/console/', '/ leads to the console');
    t.match(root?.headers()['content-security-policy'], /script-src 'self'/, 'served with its CSP');
    await page.getByRole('heading', { name: 'Sign in to the SCADA console' }).waitFor();
    await screen('01-sign-in');

    await page.getByLabel('User name').fill('admin');
    await page.getByLabel('Password').fill('not-the-password');
    expectedRefusals.add('/login');
    await button('Sign in').click();
    await page.getByRole('alert').filter({ hasText: 'The user name or password is not right.' }).waitFor();
    t.pass('a wrong password is told in a sentence');
    // With the keyboard alone: the fields in order, Enter submits.
    await page.getByLabel('User name').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type(testAdminPassword);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
    await page.getByLabel('Space').selectOption('default');
    await page.getByText('No connections in this space yet.').waitFor();
    await screen('02-connections-empty');

    await page.getByRole('link', { name: 'New connection' }).click();
    await page.getByLabel('Name').fill('sim');
    await page.getByLabel('Device address').fill('127.0.0.1');
    await page.getByLabel('Port').fill(String(sim.port));
    await page.getByLabel('New project').fill('Plant');
    await page.getByLabel(/SCL file/).setInputFiles({ name: 'sim.icd', mimeType: 'application/xml', buffer: Buffer.from(FIXTURE_SCL) });
    await screen('03-connection-form');
    await button('Save').click();
    await page.getByRole('heading', { name: 'Connection sim saved' }).waitFor();
    t.ok(await page.getByText(/SCL file sim\.icd, edition/).isVisible(), 'the parse report names the file and its edition');
    await screen('04-parse-report');

    await button('Open the connection').click();
    await page.getByRole('button', { name: 'CtlModels (enumeration)' }).waitFor();
    t.pass("the SCL model's enumerations are named in the tree by their id");
    await button('Start session').click();
    await page.locator('h1 .badge', { hasText: 'connected' }).waitFor({ timeout: 20_000 });
    t.pass('the session event shows the connection connected');
    await button('Browse again').click();
    await page.getByText('The model the connected device declares.').waitFor();
    await summary('SIMLD0').click();
    await summary('LLN0').click();
    await page.getByRole('button', { name: /Enable reports of .*urcb01/ }).click();
    await page.getByText('reports enabled').waitFor();
    await screen('05-model-tree');

    await page.getByRole('link', { name: 'Live values' }).click();
    const ind1 = page.locator('tr[data-reference*="Ind1"][data-reference*="stVal"] td.value');
    await ind1.filter({ hasText: 'false' }).waitFor();
    sim.setValue('SIMLD0/GGIO1$ST$Ind1$stVal', { type: 'boolean', value: true });
    await ind1.filter({ hasText: 'true' }).waitFor();
    t.not(await ind1.getAttribute('data-changes'), '0', 'the change arrives over the live channel and flashes its cell');
    const ind1Row = page.locator('tr[data-reference="SIMLD0/GGIO1.Ind1.stVal[ST]"]');
    t.equal(await ind1Row.locator('td.quality').textContent(), 'good', "the data object's quality is on the value's own row");
    t.equal(await page.locator('tr[data-reference*="Ind1.q"]').count(), 0, 'and not a row of its own');
    // A measurement of the whole data object (`AnIn1[MX]`) is split into its attributes, rounded, with its time.
    const magnitude = Math.fround(-0.05564487352967262);
    sim.setValue('SIMLD0/GGIO1$MX$AnIn1', {
      type: 'structure',
      value: [
        { type: 'structure', value: [{ type: 'float', value: magnitude, double: false }] },
        sim.value('SIMLD0/GGIO1$MX$AnIn1$q'),
        { type: 'utc-time', value: utcTimeFromMs(Date.now()) },
      ],
    });
    const mag = page.locator('tr[data-reference="SIMLD0/GGIO1.AnIn1.mag.f[MX]"]');
    await mag.locator('td.value').filter({ hasText: '-0.05564' }).waitFor();
    t.equal(await mag.locator('td.value').getAttribute('title'), String(magnitude), 'the full value on hover');
    t.equal(await mag.locator('td.quality').textContent(), 'good', 'with the quality of its data object');
    t.match(await mag.locator('td.time').first().textContent(), /^\d{2}:\d{2}:\d{2}\.\d{3}$/, 'and its device time on the 24-hour clock');
    await screen('06-live-values');
    await page.setViewportSize({ width: 768, height: 1024 });
    await screen('06-live-values-tablet');
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByRole('link', { name: 'Model' }).click();
    await summary('SIMLD0').click();
    await summary('LLN0').click();
    await summary('NamPlt').click();
    faults.refuseWrites = { 'SIMLD0/LLN0$DC$NamPlt$vendor': 3 };
    expectedRefusals.add('/write');
    await page.getByRole('button', { name: /^Write .*vendor/ }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Type').selectOption('text');
    await dialog.getByLabel('Value').fill('Plant');
    await dialog.getByRole('button', { name: 'Write…' }).click();
    await dialog.getByText('Write "Plant" to').waitFor();
    await screen('07-write-confirm');
    await dialog.getByRole('button', { name: 'Yes, write it' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'The device refused it (object-access-denied)' }).waitFor();
    await screen('08-write-refused');
    t.pass("a refused write shows the device's reason");
    delete faults.refuseWrites;
    await dialog.getByRole('button', { name: 'Write…' }).click();
    await dialog.getByRole('button', { name: 'Yes, write it' }).click();
    await dialog.getByText('The device took the value.').waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();

    await summary('GGIO1').click();
    await page.getByRole('button', { name: 'Operate SIMLD0/GGIO1.SPCSO2' }).click();
    await dialog.getByText('select before operate with normal security').waitFor();
    await dialog.getByLabel('Command', { exact: true }).selectOption('true');
    await dialog.getByRole('button', { name: 'Operate' }).click();
    await dialog.getByText('The device carried the command out.').waitFor();
    t.equal(await dialog.locator('.step.done').count(), 2, 'select and operate both done');
    await screen('09-control');
    await dialog.getByRole('button', { name: 'Close' }).click();

    await page.getByRole('link', { name: 'Control log' }).click();
    const row = page.locator('table.log tbody tr').filter({ hasText: 'SIMLD0/GGIO1.SPCSO2' });
    await row.waitFor();
    t.match(await row.textContent(), /control[\s\S]*ok/, 'the operation is in the control log');
    t.ok(
      await page.locator('table.log tbody tr').filter({ hasText: 'object-access-denied' }).count(),
      'so is the refused write, with its reason',
    );
    await screen('10-control-log');

    await page.getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('row').filter({ hasText: 'sim' }).locator('.badge', { hasText: 'connected' }).waitFor();
    t.pass('the list shows the live state of each connection');
    await screen('11-connections');

    await page.getByRole('link', { name: 'Scripts' }).click();
    await page.getByRole('link', { name: 'New script' }).click();
    await page.getByLabel('Name').fill('greeting');
    await page.getByLabel('Schedule').selectOption('Periodic');
    await page.getByLabel('Period (ms)').fill('60000');
    await page.locator('.cm-content').waitFor();
    t.pass('the code editor is loaded on the script page');
    await page.getByLabel('Code').fill("ins.log('hello from the console'); 6 * 7");
    await button('Save').click();
    await page.getByRole('heading', { name: 'Script greeting' }).waitFor();
    await button('Run now').click();
    await page.getByRole('heading', { name: /^Run: ok in/ }).waitFor();
    t.match(await page.getByLabel('Logs of the run').textContent(), /hello from the console/, 'a run by hand shows its logs');
    await button('Schedule').click();
    await page.getByText('Status: Scheduled').waitFor();
    await screen('12-script');
    await button('Unschedule').click();
    await page.getByText('Status: Not Scheduled').waitFor();
    t.pass('a script is scheduled and unscheduled');

    await page.getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('link', { name: 'Sign-ins' }).click();
    await page.getByRole('heading', { name: 'Sign-in log' }).waitFor();
    await page.locator('td', { hasText: 'refused' }).first().waitFor();
    await screen('13-users');

    await button('Sign out').click();
    await page.getByText('You are signed out.').waitFor();
    await screen('14-signed-out');
    t.same(problems, [], 'no console error and no CSP violation');
  });

  t.test(`a password set by an administrator is changed first, and a one-time code is asked for (${p.mode})`, async (t) => {
    const opened = await open(t);
    const { page, problems } = opened;
    const admin = await asAdmin(p);
    const user = await createUser(p, { role: 'viewer' });
    const json = { ...admin.headers, 'content-type': 'application/json' };
    const reset = await fetch(`${p.url}/api/users/${user.username}/reset-password`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ newPassword: 'temporary-password-1' }),
    });
    t.equal(reset.status, 204, 'an administrator set the password');
    const signIn = async (password: string) => {
      await page.getByLabel('User name').fill(user.username);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    };

    await page.goto(`${p.url}/console/`);
    await signIn('temporary-password-1');
    await page.getByRole('heading', { name: 'Choose your own password' }).waitFor();
    await check(t, page, '15-change-password');
    await page.getByLabel('Current password').fill('temporary-password-1');
    await page.getByLabel('New password', { exact: true }).fill('my-own-password-17');
    await page.getByLabel('New password again').fill('my-own-password-17');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
    t.pass('after the change the console opens');
    t.notOk(await page.getByRole('link', { name: 'New connection' }).count(), 'a viewer is offered no new connection');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();

    const enrolled = await fetch(`${p.url}/api/users/${user.userId}/otp`, { method: 'POST', headers: json, body: '{}' });
    t.equal(enrolled.status, 200, 'an administrator enrolled the user in TOTP');
    const { secret } = (await enrolled.json()) as { secret: string };
    await signIn('my-own-password-17');
    await page.getByRole('heading', { name: 'One-time code' }).waitFor();
    await check(t, page, '16-one-time-code');
    await page.getByLabel('Code').fill(generateSync({ secret }));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
    t.pass('the code opens the console');

    // The session ends elsewhere (its cookies used by another client to sign out): the live stream's end
    // brings the console back to sign-in. Once the console has loaded what it shows: a request still in
    // flight would be refused with 401 (a failed load in the console, and a sign-in screen for another reason).
    await opened.settled();
    const cookies = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    t.equal((await fetch(`${p.url}/logout`, { method: 'POST', headers: { cookie: cookies } })).status, 200);
    await page.getByText('Your session has ended. Please sign in again.').waitFor();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    t.pass('a session ended elsewhere shows sign-in');
    t.same(problems, [], 'no console error');
  });

  t.test(`controls: the enhanced-security walk, a negative termination, another operation pending (${p.mode})`, async (t) => {
    const c = await liveConnection(p, sim.port, { scl: FIXTURE_SCL });
    await c.connect();
    const { page, problems, expectedRefusals } = await open(t, {
      signIn: { url: p.url, who: { username: 'admin', password: testAdminPassword } },
    });
    await page.goto(`${p.url}/console/#/connections/${c.id}/model`);
    await page.getByText('The model the connected device declares.').waitFor();
    for (const name of ['SIMLD0', 'GGIO1']) await page.getByRole('button', { name, exact: true }).first().click();
    await page.getByRole('button', { name: 'Operate SIMLD0/GGIO1.SPCSO4' }).click();
    const dialog = page.getByRole('dialog');
    const operate = dialog.getByRole('button', { name: /^Operate|Operating|Another operation/ });
    await dialog.getByText('select before operate with enhanced security').waitFor();
    await operate.click();
    await dialog.getByText('The device carried the command out.').waitFor();
    t.same(await dialog.locator('.step.done').allTextContents(), ['Select: done', 'Operate: done', 'Termination: done'], 'the three steps');

    faults.negativeTermination = 10;
    expectedRefusals.add('/control');
    await operate.click();
    await dialog
      .getByRole('alert')
      .filter({ hasText: 'The device refused it (negative-command-termination, cause: Blocked-by-interlocking)' })
      .waitFor();
    t.same(await dialog.locator('.step.failed').allTextContents(), ['Termination: failed'], 'a negative termination fails the last step');
    await check(t, page, '17-control-terminated-negatively');
    delete faults.negativeTermination;

    // Another client's operation holds the object (the device ends it 3 s after the operate).
    faults.terminationDelayMs = 3_000;
    const operated = new Promise<void>((resolve) => {
      const seen = (n: { action: string; reference: string }) => {
        if (n.action !== 'operate' || !n.reference.endsWith('SPCSO4')) return;
        sim.off('control', seen);
        resolve();
      };
      sim.on('control', seen);
    });
    const first = c.api('POST', '/control', { reference: 'SIMLD0/GGIO1.SPCSO4', value: false });
    await operated;
    await operate.click();
    await dialog.getByRole('alert').filter({ hasText: 'Another operation on this control is still running' }).waitFor();
    t.ok(await operate.isDisabled(), 'the button is disabled while the other operation runs');
    t.equal(await operate.textContent(), 'Another operation is running…');
    await check(t, page, '18-control-in-progress');
    t.equal((await first).status, 204, 'the other operation gets its own outcome');
    delete faults.terminationDelayMs;
    await dialog.getByRole('button', { name: 'Close' }).click();

    // A connection whose SCL file describes another IED: the session says so.
    const other = await liveConnection(p, sim.port, {
      scl: await readFile(new URL('./fixtures/scl/feeder_relay.icd', import.meta.url), 'utf8'),
    });
    await other.connect();
    await page.goto(`${p.url}/console/#/connections/${other.id}/model`);
    await page.getByRole('heading', { name: 'Session warnings' }).waitFor();
    t.match(
      await page.locator('.alert.warn').textContent(),
      /The device's model differs from the SCL file.*FDR1/,
      'model_mismatch in words, naming the IED of the file',
    );
    await check(t, page, '19-session-warning');
    t.same(problems, [], 'no console error and no CSP violation');
  });
}
