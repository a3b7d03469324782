/**
 * The platform's entry point: `npm start` (Node with tsx) and `deno task start` run this file, and the
 * all-in-one bundle is built from it. It alone reads the environment; everything else is given what it needs.
 */
import { runProcess } from '@scada/platform';
import { allParts } from './launch.ts';

await runProcess(allParts, process.env);
