/** The protocol service. */
export { protocolService } from './service.ts';
