/**
 * Every test file of this folder but the store files (`store_*.test.ts`), run in this one test process
 * (`@scada/testkit/together` says why and what a file run so may not do). Each can still be run alone by naming
 * it: `npx tap platform/test/bus_contract.test.ts`.
 *
 * The store files run alone, each in its own process: they create and open data folders on disk, take long on a
 * busy disk, and `store_worker` sets its own time limit on tap's root.
 */
import t from 'tap';
import { loadTogether, testFilesIn } from '@scada/testkit/together';

const here = new URL('./', import.meta.url);
loadTogether(
  t,
  here,
  testFilesIn(here, (name) => name.startsWith('store_')),
);
