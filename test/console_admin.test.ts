/**
 * The console's administration and script screens in a real browser (headless Chromium driven by
 * playwright-core) against the platform: a script edited, saved and run again; a space created and a user
 * added to it with a role; a user edited, disabled, their password reset (their next sign-in asks for
 * their own) and deleted, each destructive act confirmed in a dialog; the sites of the space listed. Any
 * console error or CSP violation fails it; axe-core finds no serious or critical violation on the new
 * screens; no screen scrolls sideways at 390 px or 1280 px. Screenshots go to test/output/console/
 * (git-ignored). Without Chromium it skips, except in CI (@scada/testkit/browser).
 */
import t, { type Test } from 'tap';
import { startTestPlatform, testAdminPassword } from '@scada/testkit/platform';
import { asAdmin, createUser, login } from '@scada/testkit/session';
import { liveConnection } from '@scada/testkit/live';
import { scriptsApi } from '@scada/testkit/scripts';
import { browserAvailable, signInThroughForm, startBrowser } from '@scada/testkit/browser';
import type { Page } from 'playwright-core';

if (browserAvailable(t)) await run();

async function run(): Promise<void> {
  const { open, check: checkScreen } = await startBrowser(t, { shotPrefix: 'admin-' });
  const p = await startTestPlatform();
  t.teardown(() => p.stop());
  const admin = await asAdmin(p);
  const get = async <T>(path: string) => {
    const res = await fetch(`${p.url}${path}`, { headers: admin.headers });
    return { status: res.status, body: (res.status === 200 ? await res.json() : null) as T };
  };

  /** Checks the screen with axe, that it does not scroll sideways at 390 px and 1280 px, and saves its screenshots. */
  const check = (t: Test, page: Page, name: string) => checkScreen(t, page, name, { widths: [390, 1280] });

  /** Signs in through the form. */
  const signInAs = (page: Page, username: string, password: string) => signInThroughForm(page, p.url, { username, password });

  t.test(`an edited script is saved and runs with its new code (${p.mode})`, async (t) => {
    const scripts = await scriptsApi(p, admin);
    const id = await scripts.create("ins.log('first version');", { name: 'edited' });
    const { page, problems } = await open(t);
    await signInAs(page, 'admin', testAdminPassword);
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
    await page.goto(`${p.url}/console/#/scripts/${id}`);
    await page.getByRole('heading', { name: 'Script edited' }).waitFor();
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByLabel('Logs of the run').filter({ hasText: 'first version' }).waitFor();
    await page.locator('.cm-content').waitFor();
    await page.getByLabel('Code').fill("ins.log('second version'); return 6 * 7");
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    t.pass('the page answered in kind: the save was taken, not refused for its extra fields');
    const stored = await get<{ code: string }>(`/api/scripts/${id}`);
    t.equal(stored.body.code, "ins.log('second version'); return 6 * 7", 'the new code is stored');
    await page.getByRole('button', { name: 'Run now' }).click();
    await page.getByLabel('Logs of the run').filter({ hasText: 'second version' }).waitFor();
    t.match(await page.getByText(/^Result:/).textContent(), /42/, 'the run is of the saved code');
    t.same(problems, [], 'no console error and no CSP violation');
  });

  t.test(`administration: spaces and members, users edited, disabled, reset and deleted, sites (${p.mode})`, async (t) => {
    const ada = await createUser(p, { role: 'viewer', username: `ada-${Date.now()}` });
    await liveConnection(p, 1, { editor: admin });
    const { page, problems, expectedRefusals } = await open(t);
    const dialog = page.getByRole('dialog');
    const status = (text: string | RegExp) => page.getByRole('status').filter({ hasText: text }).waitFor();
    const tab = (name: string) => page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name });
    await signInAs(page, 'admin', testAdminPassword);
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).click();
    await page.getByRole('heading', { name: 'User accounts' }).waitFor();
    const row = page.locator(`tr[data-user="${ada.username}"]`);
    await row.waitFor();
    await check(t, page, 'users');

    // A space created, and the user added to it with a role.
    await tab('Spaces and members').click();
    await page.getByLabel('New space').fill('North plant');
    await page.getByRole('button', { name: 'Create space' }).click();
    await status('The space North plant was created.');
    await page.getByLabel('New space').fill('North plant');
    expectedRefusals.add('/api/spaces');
    await page.getByRole('button', { name: 'Create space' }).click();
    await page.getByRole('alert').filter({ hasText: 'A space named North plant exists.' }).waitFor();
    t.pass("a second space of the same name is refused in the service's words");
    await page.getByRole('link', { name: 'North plant' }).click();
    await page.getByRole('heading', { name: 'Members of North plant' }).waitFor();
    await page.getByLabel('User', { exact: true }).selectOption({ label: ada.username });
    await page.getByLabel('Role', { exact: true }).selectOption('editor');
    await page.getByRole('button', { name: 'Add to North plant' }).click();
    await status(`${ada.username} was added to North plant as editor.`);
    await page.getByRole('table', { name: 'Members of North plant' }).getByRole('cell', { name: ada.username, exact: true }).waitFor();
    const spaces = (await get<{ id: string; name: string }[]>('/api/spaces')).body;
    const north = spaces.find((s) => s.name === 'North plant');
    const added = (await get<{ spaces: string[]; roles: string[] }>(`/api/users/${ada.userId}`)).body;
    t.ok(north && added.spaces.includes(north.id), 'the user belongs to the new space');
    t.ok(added.roles.includes('editor'), 'with the role chosen');
    await check(t, page, 'spaces');

    // Edited.
    await tab('User accounts').click();
    await row.getByRole('button', { name: `Edit ${ada.username}` }).click();
    await dialog.getByLabel('Email (optional)').fill('ada@plant.example');
    await dialog.getByLabel('operator').check();
    await check(t, page, 'edit-dialog');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await status(`${ada.username} was saved.`);
    const edited = (await get<{ email: string; roles: string[] }>(`/api/users/${ada.userId}`)).body;
    t.equal(edited.email, 'ada@plant.example', 'the address is saved');
    t.same([...edited.roles].sort(), ['editor', 'operator', 'viewer'], 'and the role added');

    // Disabled, after a confirmation; enabled again.
    await row.getByRole('button', { name: `Disable ${ada.username}` }).click();
    await dialog.getByText('cannot sign in until an administrator enables the account again').waitFor();
    await check(t, page, 'disable-dialog');
    await dialog.getByRole('button', { name: 'Disable', exact: true }).click();
    await status(`${ada.username} is disabled.`);
    await row.getByText('disabled').waitFor();
    t.equal((await login(p, ada.username, ada.password)).status, 401, 'a disabled user cannot sign in');
    await row.getByRole('button', { name: `Enable ${ada.username}` }).click();
    await status(`${ada.username} is enabled again.`);

    // The password reset: the user's next sign-in asks for their own.
    await row.getByRole('button', { name: `Reset password of ${ada.username}` }).click();
    await dialog.getByLabel('Temporary password').fill('temporary-password-9');
    await check(t, page, 'reset-dialog');
    await dialog.getByRole('button', { name: 'Reset password' }).click();
    await status(`The password of ${ada.username} was reset.`);
    await row.getByText('must choose a password').waitFor();
    const other = await open(t);
    await signInAs(other.page, ada.username, 'temporary-password-9');
    await other.page.getByRole('heading', { name: 'Choose your own password' }).waitFor();
    t.pass("the user's next sign-in asks for their own password");
    t.same(other.problems, [], 'no console error for the user either');

    // Deleted, after a confirmation.
    await row.getByRole('button', { name: `Delete ${ada.username}` }).click();
    await dialog.getByText('This cannot be undone.').waitFor();
    await check(t, page, 'delete-dialog');
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await status(`${ada.username} was deleted.`);
    await row.waitFor({ state: 'detached' });
    t.equal((await get(`/api/users/${ada.userId}`)).status, 404, 'the user is gone');

    // The sites of the space.
    await tab('Sites').click();
    await page.locator('tr[data-site="central"]').waitFor();
    t.match(await page.locator('tr[data-site="central"]').textContent(), /central/, 'the central site is listed with its state');
    await check(t, page, 'sites');

    await tab('Sign-ins').click();
    await page.getByRole('heading', { name: 'Sign-in log' }).waitFor();
    await page.locator('td', { hasText: 'refused' }).first().waitFor();
    await check(t, page, 'sign-ins');
    t.same(problems, [], 'no console error and no CSP violation');
  });
}
