/**
 * The config service alone in a process, as its image runs it (the bundle of this file): `SERVICES` may only
 * name `config`, and nothing of the other services or the gateway is imported.
 */
import { openStore, runProcess } from '@scada/platform';
import { configService } from './service.ts';

await runProcess({ services: { config: configService }, openStore }, process.env);
