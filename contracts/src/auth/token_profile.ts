/**
 * The platform's tokens, as the auth service signs them and the gateway verifies them: one definition, so
 * the two can never drift apart. The gateway still takes issuer, audience and algorithm from the auth
 * service's key answer, and checks them against these.
 */
export const tokenProfile = {
  issuer: 'scada-platform',
  accessAudience: 'scada-api',
  refreshAudience: 'scada-refresh',
  algorithm: 'EdDSA',
  accessType: 'at+jwt',
  refreshType: 'refresh+jwt',
  /** Claims every token must carry; one without any of them is refused. */
  requiredClaims: ['iss', 'aud', 'exp', 'iat', 'jti', 'sub', 'sid'],
} as const;

/** How long the one-time challenge of a sign-in that needs a TOTP code lasts, in seconds (its cookie as long). */
export const otpChallengeSeconds = 300;
