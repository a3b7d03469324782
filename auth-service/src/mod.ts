/** The auth service. */
export { authService } from './service.ts';
