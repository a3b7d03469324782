/**
 * The fault suite in full (`npm run bench faults`): longer phases and outages than the short form CI runs
 * in `test/faults.test.ts`. Needs `nats-server` and PostgreSQL's programs on the machine.
 */
import { cpus, totalmem } from 'node:os';
import { faultTable, runFaultSuite } from '@scada/testkit/faults/suite';

const result = await runFaultSuite({
  phaseSeconds: Number(process.env.FAULTS_PHASE_SECONDS ?? 10),
  outageSeconds: Number(process.env.FAULTS_OUTAGE_SECONDS ?? 5),
  workers: Number(process.env.FAULTS_WORKERS ?? 16),
  busTimeoutMs: 5000,
  progress: (line) => console.error(line),
});
console.log(`### Fault suite, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB\n`);
console.log(faultTable(result));
