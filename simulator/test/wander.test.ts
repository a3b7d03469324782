/**
 * `--wander`: attributes that keep moving for people watching the platform. A float follows its wave
 * around the value it started from, a boolean turns over at its pace, an integer counts up; a type that
 * cannot wander and an unknown reference are refused before anything moves; stopping stops them.
 */
import t from 'tap';
import { startSimulator, wander } from '../src/server.ts';
import { fixtureModel } from '@scada/testkit/simulator_fixture';
import { eventually } from './raw_client.ts';

const sim = await startSimulator({ model: await fixtureModel(), port: 0 });
t.teardown(() => sim.stop());
const float = 'SIMLD0/GGIO1$MX$AnIn1$mag$f';
const bool = 'SIMLD0/GGIO1$ST$Ind1$stVal';
// A fast pace: a move every 10 ms, a wave of 400 ms, a turn every 50 ms.
const pace = { tickMs: 10, periodMs: 400, flipMs: 50 };

t.test('a float waves around its value and a boolean turns over, until stopped', async (t) => {
  const start = sim.value(float) as { value: number };
  const startBool = (sim.value(bool) as { value: boolean }).value;
  const stop = wander(sim, [float, bool], pace);
  const seen = new Set<number>();
  const flips = new Set<boolean>();
  await eventually(() => {
    seen.add((sim.value(float) as { value: number }).value);
    flips.add((sim.value(bool) as { value: boolean }).value);
    return seen.size >= 5 && flips.size === 2;
  });
  t.ok(seen.size >= 5, 'the float moved');
  t.ok(
    [...seen].every((v) => Math.abs(v - start.value) <= Math.max(10, Math.abs(start.value) / 2) + 1e-3),
    'within its wave around where it started',
  );
  t.same([...flips].sort(), [false, true].sort(), `the boolean turned over from ${startBool}`);
  stop();
  const still = (sim.value(float) as { value: number }).value;
  await new Promise((r) => setTimeout(r, 5 * pace.tickMs));
  t.equal((sim.value(float) as { value: number }).value, still, 'stopped, it moves no more');
});

t.test('what cannot wander is refused before anything moves', async (t) => {
  t.throws(() => wander(sim, ['SIMLD0/LLN0$DC$NamPlt$vendor'], pace), /does not wander/, 'a string');
  t.throws(() => wander(sim, ['SIMLD0/GGIO1$MX$NoSuch$mag$f'], pace), 'an unknown reference');
});
