/**
 * The auth service alone in a process, as its image runs it (the bundle of this file): `SERVICES` may only
 * name `auth`, and nothing of the other services or the gateway is imported.
 */
import { openStore, runProcess } from '@scada/platform';
import { authService } from './service.ts';

await runProcess({ services: { auth: authService }, openStore }, process.env);
