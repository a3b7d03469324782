import {
  getAuthFeatures,
  getOwnDefaultSpace,
  getProfile,
  ProblemError,
  resetOwnPassword,
  setOwnDefaultSpace,
  updateProfile,
  type ProfileUpdateRequest,
} from '@scada/contracts';
import { actorOf, implement, type HandlerContext, type Implementation } from '@scada/platform';
import { passwordLength } from '../domain/passwords.ts';
import { chooseDefaultSpace } from '../store/memberships.ts';
import { findSpace } from '../store/spaces.ts';
import { publicUser, setOtpSecret, updateUserFields, type UserRecord } from '../store/users.ts';
import { actorName, announceUser, callerRecord, endUserSessions, principalOf, type AuthDeps } from './deps.ts';
import { requireStepUp } from './step_up.ts';

/** The caller's profile and default space, and what the sign-in offers. */
export function profileHandlers(deps: AuthDeps): Implementation[] {
  /** The space a user's requests work in when they name none; 404 for a user in no space. */
  const defaultSpaceOf = async (user: UserRecord) => {
    const { activeSpace } = await principalOf(deps, user);
    const space = activeSpace === null ? null : await findSpace(deps.store, activeSpace);
    if (!space) throw new ProblemError('not_found', `${user.username} belongs to no space`);
    return space;
  };

  return [
    implement(getProfile, async (_m, ctx) => publicUser(await callerRecord(deps, ctx))),

    implement(updateProfile, async ({ body }, ctx) => {
      const user = await callerRecord(deps, ctx);
      const otpOff = await otpChange(deps, ctx, user, body);
      await deps.store.transaction(async (tx) => {
        await updateUserFields(tx, user.id, { email: body.email === '' ? null : body.email, phone: body.phone }, actorName(ctx));
        if (otpOff) await setOtpSecret(tx, user.id, null, actorName(ctx));
      });
      announceUser(deps, ctx, 'updated', user.id);
      return null;
    }),

    implement(resetOwnPassword, async ({ body }, ctx) => {
      const user = await callerRecord(deps, ctx);
      if (body.newPasswordAgain !== body.newPassword) {
        throw new ProblemError('validation_failed', 'The new password was not the same twice', {
          errors: [{ path: '/body/newPasswordAgain', message: 'must equal newPassword' }],
        });
      }
      await requireStepUp(deps, ctx, user, { currentPassword: body.oldPassword, otpCode: body.otpCode }, 'Changing the password');
      const passwordHash = await deps.passwords.hash(body.newPassword);
      await updateUserFields(deps.store, user.id, { passwordHash, requirePasswordReset: false }, actorName(ctx));
      // Whoever else holds a session of this user (perhaps with the old password) is signed out.
      await endUserSessions(deps, ctx, user.id, actorOf(ctx).sid ?? null);
      announceUser(deps, ctx, 'updated', user.id);
      return null;
    }),

    implement(getOwnDefaultSpace, async (_m, ctx) => defaultSpaceOf(await callerRecord(deps, ctx))),

    implement(setOwnDefaultSpace, async ({ query }, ctx) => {
      const user = await callerRecord(deps, ctx);
      const { spaces } = await principalOf(deps, user);
      // A space the caller is not in does not exist for them.
      if (!spaces.includes(query.spaceId)) throw new ProblemError('not_found', `No space ${query.spaceId}`);
      await chooseDefaultSpace(deps.store, user.id, query.spaceId, actorName(ctx));
      announceUser(deps, ctx, 'updated', user.id);
      return null;
    }),

    implement(getAuthFeatures, async () => ({
      registrationEnabled: false,
      oauthEnabled: false,
      otpTypes: ['totp' as const],
      lockoutThreshold: deps.config.lockoutThreshold,
      lockoutSeconds: deps.config.lockoutSeconds,
      passwordMinLength: passwordLength.min,
      passwordMaxLength: passwordLength.max,
    })),
  ];
}

/**
 * Whether the profile change turns TOTP off, after the step-up that needs. Asking for the type the user
 * has is no change; turning TOTP on is refused here, because enrolment must answer the secret.
 */
async function otpChange(deps: AuthDeps, ctx: HandlerContext, user: UserRecord, body: ProfileUpdateRequest): Promise<boolean> {
  if (body.otpType === undefined || body.otpType === user.otpType) return false;
  if (body.otpType === 'totp') {
    throw new ProblemError('validation_failed', 'TOTP is enrolled with POST /api/users/{userId}/otp, which answers the secret', {
      errors: [{ path: '/body/otpType', message: 'enrol with POST /api/users/{userId}/otp' }],
    });
  }
  await requireStepUp(deps, ctx, user, body, 'Turning TOTP off');
  return true;
}
