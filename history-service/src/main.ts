/**
 * The history service alone in a process, as its image runs it (the bundle of this file): `SERVICES` may
 * only name `history`, and nothing of the other services or the gateway is imported.
 */
import { openStore, runProcess } from '@scada/platform';
import { historyService } from './service.ts';

await runProcess({ services: { history: historyService }, openStore }, process.env);
