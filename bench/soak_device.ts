/**
 * The soak's device (`soak.bench.ts`), in a process of its own so that it offers its rate whatever the
 * bench's own process (the live clients' parsing) is doing: the simulator on a free port, reporting a
 * counter `rate` times a second once told to start. Over IPC: out `{port}` once listening, `{last}` every
 * 100 ms while it runs and `{stopped: last}` when told `{stop: true}`; in `{start: {rate, max}}`,
 * `{stop: true}` and `{exit: true}`.
 */
import { startSimulator } from '@scada/simulator';
import { fixtureCounter, fixtureModel } from '@scada/testkit/simulator_fixture';

type FromBench = { start?: { rate: number; max: number }; stop?: boolean; exit?: boolean };

const send = (msg: unknown) => process.send?.(msg);
const sim = await startSimulator({ model: await fixtureModel(), port: 0, faults: { bufferEntries: 20_000 } });
const counter = fixtureCounter(sim);
const timers: NodeJS.Timeout[] = [];
process.on('message', (msg: FromBench) => {
  if (msg.start) {
    const { rate, max } = msg.start;
    const started = Date.now();
    const everyMs = 1000 / rate;
    // Catches up on ticks a busy moment delayed, at most a tenth of a second's worth at once: a machine that
    // cannot keep the rate gets fewer values, not a device that never yields.
    timers.push(
      setInterval(() => {
        const due = Math.min(max, Math.floor((Date.now() - started) / everyMs), counter.last + Math.ceil(rate / 10));
        while (counter.last < due) counter.next();
      }, 10),
      setInterval(() => send({ last: counter.last }), 100),
    );
  }
  if (msg.stop) {
    for (const timer of timers.splice(0)) clearInterval(timer);
    send({ stopped: counter.last });
  }
  if (msg.exit) void sim.stop().finally(() => process.exit(0));
});
process.on('disconnect', () => void sim.stop().finally(() => process.exit(0)));
send({ port: sim.port });
