/** The history service. */
export { historyService } from './service.ts';
