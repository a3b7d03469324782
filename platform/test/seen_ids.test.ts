/**
 * The in-process event log's duplicate window: an id is refused again for the whole window, and
 * forgotten within a twelfth of the window after it, whatever the number of ids held.
 */
import t from 'tap';
import { duplicateWindowMs, SeenIds } from '../src/bus/event_log.ts';

t.test('an id is a repeat for the whole window and forgotten within a generation after it', async (t) => {
  let now = 1_000_000;
  const seen = new SeenIds(() => now);
  t.equal(seen.repeated('a'), false, 'first seen');
  now += duplicateWindowMs - 1;
  t.equal(seen.repeated('a'), true, 'a repeat just inside the window');
  t.equal(seen.repeated('b'), false);
  now += duplicateWindowMs / 12 + 2;
  t.equal(seen.repeated('a'), false, "past the window and a generation, 'a' is new again");
  t.equal(seen.repeated('b'), true, "'b', seen later, is still within its window");
});

t.test('ids in every generation of the window are repeats; many ids a generation stay exact', async (t) => {
  let now = 0;
  const seen = new SeenIds(() => now);
  const step = duplicateWindowMs / 60;
  let fresh = 0;
  for (let i = 0; i < 60; i++) {
    for (let j = 0; j < 1000; j++) if (!seen.repeated(`id-${i}-${j}`)) fresh++;
    now += step;
  }
  t.equal(fresh, 60_000, 'every id new the first time');
  now -= step;
  let repeats = 0;
  for (let i = 0; i < 60; i++) for (let j = 0; j < 1000; j++) if (seen.repeated(`id-${i}-${j}`)) repeats++;
  t.equal(repeats, 60_000, 'every id of the last window is a repeat');
  t.equal(seen.repeated('id-new'), false);
});
