/**
 * The live value files (live data, sessions, the log opening, the ingest hold, stamps, arrays, integers), run in this one test process, one file after the other (`loadInTurn`): each starts its own platform
 * and stops it before the next file loads, but the process, tap and the platform's modules are paid once
 * (docs/testing.md, seventh pass). `package.json`'s tap `exclude` and the PostgreSQL + NATS pass of `.ci/run`
 * leave out the files named here (checked below), so each runs once in either pass; each still runs alone:
 * `npx tap test/live.test.ts`.
 */
import t from 'tap';
import { loadInTurn, leftOutOfTapRuns } from '@scada/testkit/together';

const names = ['live', 'live_sessions', 'live_log_opening', 'ingest_hold', 'value_stamps', 'array_elements', 'integer_parameters'];

leftOutOfTapRuns(t, new URL('../', import.meta.url), `test/@(${names.join('|')}).test.ts`);
loadInTurn(
  t,
  new URL('./', import.meta.url),
  names.map((name) => `${name}.test.ts`),
);
