/*
 * The auth service's secrets at rest: token-signing private keys and TOTP secrets, sealed with the
 * platform's secret box (`@scada/platform`, `secrets.ts`) under SECRETS_KEY, each bound to its row by the
 * purposes below.
 */
export { newSecretsKeyText, parseSecretsKey, secretBox, type SecretBox } from '@scada/platform';

/** The purpose a user's TOTP secret is sealed for. */
export function totpPurpose(userId: string): string {
  return `totp:${userId}`;
}

/** The purpose a signing key's private part is sealed for. */
export function signingKeyPurpose(kid: string): string {
  return `signing-key:${kid}`;
}
