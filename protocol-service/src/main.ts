/**
 * The protocol service alone in a process, as its image runs it (the bundle of this file): `SERVICES` may only
 * name `protocol`, and nothing of the other services or the gateway is imported.
 */
import { openStore, runProcess } from '@scada/platform';
import { protocolService } from './service.ts';

await runProcess({ services: { protocol: protocolService }, openStore }, process.env);
