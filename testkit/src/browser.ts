/**
 * What the console's browser tests share: Debian's Chromium driven by playwright-core, one browser a test
 * file, or one a process for files run in turn (`keepOneBrowser`); the console built first, as `npm start` builds it (once for every file while its sources stay the
 * same); a page in a context of its own that records every console error, page error, CSP violation,
 * dialog and request; signing in through the form; and a screen's check (axe-core finds no serious or
 * critical violation, nothing scrolls sideways, a screenshot under test/output/console/, which git ignores).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { type ConsoleBuild, consoleBuiltOnce } from '@scada/console/build';
import type { Browser, BrowserContext, BrowserType, Page, Request } from 'playwright-core';

/** What this module needs of a tap test (the testkit does not depend on tap). */
type Test = {
  teardown(fn: () => unknown): void;
  same(found: unknown, wanted: unknown, message: string): unknown;
  equal(found: unknown, wanted: unknown, message: string): unknown;
};

/** What it needs of a test file's top-level test. */
type FileTest = Test & {
  fail(message: string): unknown;
  plan(n: number, comment?: string): unknown;
  setTimeout(ms: number): unknown;
};

/** Where Chromium is: `CHROMIUM_PATH`, else Debian's package. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where the screenshots go (git-ignored). */
export const screenshotsDir = new URL('../../test/output/console/', import.meta.url).pathname;

/** axe-core's rule sets the console is held to: WCAG 2.1, levels A and AA. */
const wcagTags = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * A browser file's time limit, more than the suite's per-file limit: a browser, the platform and often the
 * simulator in one process have taken 2–3 times their usual 40–60 s on two cores crowded by the other test
 * files.
 */
export const browserFileTimeoutMs = 300_000;

/**
 * The browser a process keeps for the browser files it runs in turn (`keepOneBrowser`): launched as that
 * file sets it, closed when that file ends. `null` while each file has a browser of its own.
 */
let kept: { browser: Promise<Browser> } | null = null;

/** Starts Chromium as the browser tests drive it. */
async function launchChromium(chromium?: BrowserType): Promise<Browser> {
  chromium ??= (await import('playwright-core')).chromium;
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
}

/** Why the browser tests cannot run here, or `null` when Chromium is there. */
function chromiumMissing(): string | null {
  return existsSync(chromiumPath) ? null : `Chromium is not at ${chromiumPath}`;
}

/**
 * Whether the file's browser tests can run. Without Chromium they are skipped (planned as none, with the
 * reason) on a developer's machine and fail in CI, which installs it. A file that runs gets
 * `browserFileTimeoutMs`. In a process that keeps one browser for its files (`keepOneBrowser`), that file has
 * checked Chromium and set the time limit for all of them, so this leaves tap's root alone.
 */
export function browserAvailable(t: FileTest): boolean {
  if (kept) return true;
  const missing = chromiumMissing();
  if (missing) {
    if (process.env.CI === 'true') t.fail(`${missing}: .ci/run installs the chromium package`);
    else t.plan(0, `${missing} (apt-get install chromium, or set CHROMIUM_PATH): the browser test is skipped`);
    return false;
  }
  t.setTimeout(browserFileTimeoutMs);
  return true;
}

/**
 * For a file that runs browser files in turn in its process (`loadInTurn`): one Chromium for all of them,
 * launched now and closed when `t` ends, instead of one a file (a launch and close is some 0.4–0.6 CPU-s and
 * a second of wall time on two busy cores: docs/testing.md, eighth pass). Each test still opens its pages in
 * a context of its own. Answers whether Chromium is there; without it, it fails in CI and skips (with the
 * reason) elsewhere, and the caller loads none of the files.
 */
export function keepOneBrowser(t: FileTest & { skip(name: string, fn: () => void): unknown }): boolean {
  const missing = chromiumMissing();
  if (missing) {
    if (process.env.CI === 'true') t.fail(`${missing}: .ci/run installs the chromium package`);
    else t.skip(`${missing} (apt-get install chromium, or set CHROMIUM_PATH): the browser tests are skipped`, () => {});
    return false;
  }
  // Launched now, while the first file loads its modules and starts its platform; a failed launch fails
  // each file's `startBrowser`, which awaits it.
  const held = { browser: launchChromium() };
  held.browser.catch(() => {});
  kept = held;
  t.teardown(async () => {
    if (kept === held) kept = null;
    const browser = await held.browser.catch(() => null);
    await browser?.close();
  });
  return true;
}

/** What a page logs (at debug) once it has handled a live stream's opening: see `settled`. */
const streamOpened = 'test: live stream opened';

/** Who signs in through the console's form. */
export type Who = { username: string; password: string };

/** A page in a context of its own, with what it recorded. */
export type OpenedPage = {
  page: Page;
  context: BrowserContext;
  /** Console errors, page errors and CSP violations (each CSP violation is logged as a console error). */
  problems: string[];
  /**
   * Paths whose refusal the test asks for: Chromium logs a refused request as a failed load of its URL,
   * which is not a problem once its path is here.
   */
  expectedRefusals: Set<string>;
  /** The messages of the dialogs the page opened (`alert`, `confirm`…), each dismissed. */
  dialogs: string[];
  /** The URL of every request the page made. */
  requested: string[];
  /**
   * Resolves once the page's live stream has opened and no other request has been in flight for half a
   * second: what a test waits for before it changes something under the console (a session ended
   * elsewhere, say), so that a request still loading is not refused by the change and logged as a failed
   * load.
   */
  settled(): Promise<void>;
};

/** One browser for a test file. */
export type ConsoleBrowser = {
  browser: Browser;
  /** What the console's build wrote (its sizes, for the budget). */
  built: ConsoleBuild;
  /**
   * Opens a page in a context of its own, closed when `t` ends; signed in as `signIn.who` at
   * `signIn.url` (waiting for the connections list) when asked.
   */
  open(t: Test, options?: { signIn?: { url: string; who: Who }; acceptDownloads?: boolean }): Promise<OpenedPage>;
  /**
   * Checks the screen: no serious or critical accessibility violation; at each of `widths` (the viewport
   * resized to it, 800 px high), nothing scrolls sideways, and a screenshot `<name>-<width>.png`. Without
   * `widths`, one screenshot `<name>.png` at the viewport as it is, after the sideways check when
   * `sideways` is set.
   */
  check(t: Test, page: Page, name: string, options?: { widths?: readonly number[]; sideways?: boolean }): Promise<void>;
};

/** Fills the console's sign-in form at `url` and submits it. */
export async function signInThroughForm(page: Page, url: string, who: Who): Promise<void> {
  await page.goto(`${url}/console/`);
  await page.getByLabel('User name').fill(who.username);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * Builds the console and starts Chromium, closed when the file's test ends (or takes the one its process
 * keeps, `keepOneBrowser`). The teardown it sets makes tap end the file's test by itself once idle: an
 * assertion at the file's top level belongs right before its subtests, not before a start that takes a while.
 */
export async function startBrowser(t: Test, options: { shotPrefix?: string } = {}): Promise<ConsoleBrowser> {
  const [{ chromium }, { default: AxeBuilder }, built] = await Promise.all([
    import('playwright-core'),
    import('@axe-core/playwright'),
    // Built once a suite run, not once a file: `gateway/test/console.test.ts` builds it for real every time.
    consoleBuiltOnce(),
  ]);
  let browser: Browser;
  if (kept) browser = await kept.browser;
  else {
    browser = await launchChromium(chromium);
    t.teardown(() => browser.close());
  }
  mkdirSync(screenshotsDir, { recursive: true });
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: `${screenshotsDir}${options.shotPrefix ?? ''}${name}.png`, fullPage: true });

  const open: ConsoleBrowser['open'] = async (t, { signIn, acceptDownloads = false } = {}) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads });
    t.teardown(() => context.close());
    const page = await context.newPage();
    const inFlight = new Set<Request>();
    let streamOpen = false;
    let onChange: (() => void) | undefined;
    const changed = () => onChange?.();
    // Settled once the stream has opened and nothing else is in flight for `quietMs` on end. The stream
    // counts as open once the page has handled its snapshot (or, for a stream the browser resumed, its
    // reopening), not when its headers arrive: on a crowded machine the snapshot has come more than a second
    // after the headers, and the active alarms read it starts was then still to come. What the console does
    // after an event may start a moment later, so the state must hold a while, as Playwright's `networkidle`
    // asks of a page's loads.
    const quietMs = 500;
    const settled = () =>
      new Promise<void>((resolve) => {
        let quiet: ReturnType<typeof setTimeout> | undefined;
        onChange = () => {
          clearTimeout(quiet);
          if (!streamOpen || inFlight.size > 0) return;
          quiet = setTimeout(() => {
            onChange = undefined;
            resolve();
          }, quietMs);
        };
        onChange();
      });
    const opened: OpenedPage = { page, context, problems: [], expectedRefusals: new Set(), dialogs: [], requested: [], settled };
    // A new stream starts closed; the page says when it has handled a stream's opening (`streamOpened`).
    page.on('request', (r) => {
      if (r.resourceType() === 'eventsource') streamOpen = false;
      else inFlight.add(r);
      changed();
    });
    page.on('response', () => changed());
    const ended = (r: Request) => {
      if (r.resourceType() === 'eventsource') streamOpen = false;
      inFlight.delete(r);
      changed();
    };
    page.on('requestfinished', ended);
    page.on('requestfailed', ended);
    page.on('console', (m) => {
      if (m.type() === 'debug' && m.text() === streamOpened) {
        streamOpen = true;
        changed();
      }
      if (m.type() !== 'error') return;
      const url = m.location().url ?? '';
      const refused = m.text().startsWith('Failed to load resource');
      if (refused && [...opened.expectedRefusals].some((path) => url.endsWith(path))) return;
      opened.problems.push(`console: ${m.text()} (${url})`);
    });
    page.on('pageerror', (err) => opened.problems.push(`page error: ${err.message}`));
    page.on('dialog', (d) => {
      opened.dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('request', (r) => opened.requested.push(r.url()));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));
    });
    // Each stream says when the page has handled its snapshot, or its reopening after the browser resumed it
    // (no snapshot then): after the console's own handlers, added after this one. Given as source, as the
    // page runs it: the test's TypeScript loader adds helpers of its own to named functions and classes.
    await page.addInitScript(`{
      const Native = window.EventSource;
      window.EventSource = class extends Native {
        constructor(url, init) {
          super(url, init);
          let opens = 0;
          const said = () => setTimeout(() => console.debug(${JSON.stringify(streamOpened)}), 0);
          this.addEventListener('snapshot', said);
          this.addEventListener('open', () => {
            if (++opens > 1) said();
          });
        }
      };
    }`);
    if (signIn) {
      await signInThroughForm(page, signIn.url, signIn.who);
      await page.getByRole('heading', { name: 'Connections' }).waitFor();
    }
    return opened;
  };

  const sideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

  const check: ConsoleBrowser['check'] = async (t, page, name, { widths, sideways: checkSideways = false } = {}) => {
    // axe-core's source (some 600 KB) is put in a page once and run there on each check: @axe-core/playwright
    // otherwise evaluates the whole source again at every check and then runs its last step in a blank page
    // of its own, where the source is evaluated once more (about 0.7 CPU-s a check against 0.1, measured in
    // docs/testing.md). So the page's first check injects it; the later checks of the same document, found
    // by axe being there in every frame, give the builder a no-op source. Legacy mode runs axe.run in the page
    // itself: the same rules on the same document, with frames of other origins left out (the console's
    // policy frames none unless DISPLAY_FRAME_ORIGINS names some, which no browser test does).
    const frames = page.frames();
    const present = await Promise.all(frames.map((f) => f.evaluate(() => 'axe' in window).catch(() => false)));
    const builder = present.every(Boolean) ? new AxeBuilder({ page, axeSource: ';' }) : new AxeBuilder({ page });
    const result = await builder.withTags(wcagTags).setLegacyMode().analyze();
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    t.same(
      bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
      [],
      `${name}: no serious or critical accessibility violation`,
    );
    if (!widths) {
      if (checkSideways) t.equal(await sideways(page), 0, `${name}: nothing scrolls sideways`);
      await shot(page, name);
      return;
    }
    for (const width of widths) {
      await page.setViewportSize({ width, height: 800 });
      t.equal(await sideways(page), 0, `${name} at ${width} px: no horizontal scroll`);
      await shot(page, `${name}-${width}`);
    }
  };

  return { browser, built, open, check };
}
