/** The config service. */
export { configService } from './service.ts';
