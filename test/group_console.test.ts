/**
 * The console's browser files (the whole flow, administration, alarms, displays, trends), run in this one test
 * process, one file after the other (`loadInTurn`), with one Chromium for all of them (`keepOneBrowser`): each
 * file starts its own platform (and simulator) and stops it before the next file loads, each test opens its
 * pages in a context of its own, but the process, tap, the platform's modules, playwright and Chromium's start
 * are paid once (docs/testing.md, eighth pass). Each file keeps its own time limit (`browserFileTimeoutMs`).
 * `package.json`'s tap `exclude` leaves out the files named here, and `.ci/run` runs them (and this file) in
 * the embedded pass only (checked below); each still runs alone: `npx tap test/console_trends.test.ts`.
 * Without Chromium the files are skipped, except in CI, where that fails.
 */
import t from 'tap';
import { loadInTurn, leftOutOfTapRuns } from '@scada/testkit/together';
import { browserFileTimeoutMs, keepOneBrowser } from '@scada/testkit/browser';

const names = ['console', 'console_admin', 'console_alarms', 'console_displays', 'console_trends'];

leftOutOfTapRuns(t, new URL('../', import.meta.url), `test/@(${names.join('|')}).test.ts`);
if (keepOneBrowser(t)) {
  loadInTurn(
    t,
    new URL('./', import.meta.url),
    names.map((name) => `${name}.test.ts`),
    { fileTimeoutMs: browserFileTimeoutMs },
  );
}
