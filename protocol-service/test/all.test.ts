/**
 * Every test file under this folder, run in this one test process (`@scada/testkit/together` says why and what a
 * file run so may not do). Each can still be run alone by naming it: `npx tap <its path>`.
 */
import t from 'tap';
import { loadTogether, testFilesIn } from '@scada/testkit/together';

const here = new URL('./', import.meta.url);
loadTogether(t, here, testFilesIn(here));
