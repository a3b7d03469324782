import { OtpChallenge, SessionGrant } from '@scada/contracts';

type Json = Record<string, unknown>;

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});
const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as Json;

/** The same fields in the three encodings `/login` and `/validate` accept. */
function form(properties: Record<string, Json>, required: string[]): Json {
  const schema = { type: 'object', properties, required };
  return {
    required: true,
    content: { 'application/x-www-form-urlencoded': { schema }, 'multipart/form-data': { schema }, 'application/json': { schema } },
  };
}

const {
  kind: _k,
  userId: _u,
  username: _n,
  'refresh-expire-seconds': _r,
  ...grantFields
} = plain(SessionGrant).properties as Record<string, Json>;
const grant = {
  type: 'object',
  properties: grantFields,
  required: ['access_token', 'refresh_token', 'token_type', 'expire-seconds', 'spaces', 'activeSpace'],
};
const { kind: _c, 'expire-seconds': _e, ...challengeFields } = plain(OtpChallenge).properties as Record<string, Json>;
const challenge = { type: 'object', properties: challengeFields, required: ['otp_required', 'otp_type', 'username', 'otp_token'] };

const cookies = {
  'Set-Cookie': {
    description: '`svc_access_token` and `svc_refresh_token`: `Path=/; Max-Age=<ttl>; HttpOnly; SameSite=Lax`, plus `Secure` over HTTPS.',
    schema: { type: 'string' },
  },
};
const signInErrors = {
  '400': problem('A field is missing or not text'),
  '401': problem('`invalid_credentials`: the same answer for an unknown user and a wrong password'),
  '403': problem('`csrf_rejected` (cross-site Origin) or `ip_denied`'),
  '415': problem('Another body encoding'),
  '423': problem(
    '`account_locked`, with `Retry-After`: the name is locked, or the checks in flight for it fill the lock; also for the right password',
  ),
  '429': problem(
    '`rate_limited`, with `Retry-After`: too many attempts from the client address per minute, or unanswered at once; counted by each gateway replica',
  ),
  '503': problem('`overloaded`, with `Retry-After`: the password checks of the auth service are full; answered at once'),
};

/** `/login`, `/validate`, `/refresh` and `/logout`, which the gateway shapes around the auth service. */
export function sessionPaths(): Record<string, Json> {
  return {
    '/login': {
      post: {
        operationId: 'login',
        tags: ['Authentication'],
        summary: 'Sign in with a username and password',
        description:
          'Answers the token pair and sets both session cookies; for a user with TOTP, answers an OTP challenge instead (also set as the `svc_otp_token` cookie, valid 5 minutes, single use) and no session cookies.',
        requestBody: form({ username: { type: 'string' }, password: { type: 'string', minLength: 8, maxLength: 1024 } }, [
          'username',
          'password',
        ]),
        responses: {
          '200': {
            description: 'Signed in, or the OTP step',
            headers: cookies,
            content: { 'application/json': { schema: { oneOf: [grant, challenge] } } },
          },
          ...signInErrors,
        },
      },
    },
    '/validate': {
      post: {
        operationId: 'validate',
        tags: ['Authentication'],
        summary: 'Complete a sign-in with a TOTP code',
        description:
          'The challenge comes as the `otp_token` field or the `svc_otp_token` cookie. A wrong code counts toward the account lock; a code works once.',
        requestBody: form({ username: { type: 'string' }, otp_code: { type: 'string' }, otp_token: { type: 'string' } }, [
          'username',
          'otp_code',
        ]),
        responses: {
          '200': { description: 'Signed in', headers: cookies, content: { 'application/json': { schema: grant } } },
          ...signInErrors,
        },
      },
    },
    '/refresh': {
      post: {
        operationId: 'refresh',
        tags: ['Authentication'],
        summary: 'Rotate the refresh token into a new pair',
        description:
          'The refresh token comes from the `svc_refresh_token` cookie or a `refresh_token` field. The presented token dies; presenting it again within `REFRESH_REUSE_GRACE_SECONDS` answers the current pair, later it ends the whole session.',
        requestBody: { ...form({ refresh_token: { type: 'string' } }, []), required: false },
        responses: {
          '200': { description: 'A new pair', headers: cookies, content: { 'application/json': { schema: grant } } },
          '401': problem('`invalid_token`'),
        },
      },
    },
    '/logout': {
      post: {
        operationId: 'logout',
        tags: ['Authentication'],
        summary: 'End the session',
        description: 'Revokes the access token and its refresh family on every gateway replica and clears both cookies (`Max-Age=0`).',
        security: [{ bearerAuth: [] }, { cookieAuth: [] }],
        responses: { '200': { description: 'Signed out', headers: cookies }, '401': problem('No session') },
      },
    },
  };
}
