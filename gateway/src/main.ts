/**
 * The gateway alone in a process, as its image runs it (the bundle of this file): `SERVICES` may only
 * name `gateway`, and nothing of the services is imported; it reaches them over NATS.
 */
import { runProcess } from '@scada/platform';
import { gatewayDefinition } from './definition.ts';

await runProcess({ services: {}, gateway: gatewayDefinition }, process.env);
