/**
 * Attributes of a simulated device that keep moving as a plant's would, for people watching the platform
 * (the simulator's `--wander`): values, trends and alarms then have something to show.
 */
import type { Simulator } from './server.ts';

/** How a wandering attribute moves: each tick; a float's wave over a period; a boolean turned over every `flipMs`. */
export type WanderPace = { tickMs: number; periodMs: number; flipMs: number };

/** The pace of `--wander`: a move a second, a wave of a minute, a turn every 20 s. */
export const wanderPace: WanderPace = { tickMs: 1000, periodMs: 60_000, flipMs: 20_000 };

/**
 * Moves each of `references` once a tick, from its value at the start: floats on a wave (±50 % of the
 * value, at least ±10), booleans turned over, integers counted up. Answers a function that stops them.
 */
export function wander(sim: Simulator, references: string[], pace: WanderPace = wanderPace): () => void {
  const { tickMs, periodMs, flipMs } = pace;
  const start = Date.now();
  const moves = references.map((reference) => {
    const first = sim.value(reference);
    if (first.type === 'float') {
      const amplitude = Math.max(10, Math.abs(first.value) / 2);
      return (now: number) =>
        sim.setValue(reference, { ...first, value: first.value + amplitude * Math.sin((2 * Math.PI * (now - start)) / periodMs) });
    }
    if (first.type === 'boolean')
      return (now: number) =>
        sim.setValue(reference, { type: 'boolean', value: Math.floor((now - start) / flipMs) % 2 === 1 ? !first.value : first.value });
    if (first.type === 'integer' || first.type === 'unsigned')
      return (now: number) =>
        sim.setValue(reference, { type: first.type, value: Number(first.value) + Math.floor((now - start) / tickMs) });
    throw new Error(`--wander ${reference}: a ${first.type} does not wander (floats, booleans and integers do)`);
  });
  const timer = setInterval(() => {
    const now = Date.now();
    for (const move of moves) move(now);
  }, tickMs);
  return () => clearInterval(timer);
}
