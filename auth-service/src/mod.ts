/** The auth service. */
export { authService } from './service.ts';
/** Sealing of secrets at rest, for tools and tests that read the store as an attacker would. */
export { parseSecretsKey, secretBox, signingKeyPurpose, totpPurpose } from './domain/secrets.ts';
/** Password hashing, for tests that store a hash made at another cost. */
export { passwords } from './domain/passwords.ts';
