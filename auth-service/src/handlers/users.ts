import { randomUUID } from 'node:crypto';
import {
  authEvents,
  createUser,
  deleteUser,
  disableUserOtp,
  enableUserOtp,
  getUser,
  getUsers,
  ProblemError,
  updateUser,
} from '@scada/contracts';
import {
  actorOf,
  ConstraintViolation,
  implement,
  publishEvent,
  type HandlerContext,
  type Implementation,
  type Queryable,
} from '@scada/platform';
import { totpPurpose } from '../domain/secrets.ts';
import { newTotpSecret, totpUrl } from '../domain/totp.ts';
import { listSpaces } from '../store/spaces.ts';
import {
  findUser,
  insertUser,
  listUsers,
  otherEnabledAdmins,
  publicUser,
  setOtpSecret,
  setRolesAndSpaces,
  updateUserFields,
  type UserRecord,
} from '../store/users.ts';
import { logAdminAct, requireStepUp, type StepUpProof } from './step_up.ts';
import { actorName, endUserSessions, type AuthDeps } from './deps.ts';

/** Users: list, create, read, update, delete, and TOTP enrolment. */
export function userHandlers(deps: AuthDeps): Implementation[] {
  const announce = (ctx: HandlerContext, verb: 'created' | 'updated' | 'deleted', id: string) =>
    publishEvent(deps.bus, authEvents.user, { id, space: null, actor: actorName(ctx) }, { kind: verb, requestId: ctx.requestId });

  const mustExist = async (db: Queryable, id: string) => {
    const user = await findUser(db, { id });
    if (!user) throw new ProblemError('not_found', `No user ${id}`);
    return user;
  };

  const checkSpaces = async (spaces: string[] | undefined) => {
    if (!spaces) return;
    const known = new Set((await listSpaces(deps.store, spaces)).map((s) => s.id));
    const errors = spaces.flatMap((s, i) => (known.has(s) ? [] : [{ path: `/body/spaces/${i}`, message: `no space ${s}` }]));
    if (errors.length) throw new ProblemError('validation_failed', 'Some spaces do not exist', { errors });
  };

  const endSessions = (ctx: HandlerContext, userId: string) => endUserSessions(deps, ctx, userId);

  const duplicate = (err: unknown) => err instanceof ConstraintViolation && err.kind === 'unique';

  /** Refuses changes that would leave the platform without an enabled administrator, or lock the caller out. */
  const guardAdmins = async (ctx: HandlerContext, userId: string, losesAdmin: boolean) => {
    if (!losesAdmin) return;
    if (actorOf(ctx).id === userId) throw new ProblemError('conflict', 'You cannot disable, delete or demote yourself');
    if ((await otherEnabledAdmins(deps.store, userId)) === 0)
      throw new ProblemError('conflict', 'The last enabled administrator must stay');
  };

  const selfOrAdmin = (ctx: HandlerContext, userId: string) => {
    const actor = actorOf(ctx);
    if (actor.id !== userId && !actor.roles.includes('admin'))
      throw new ProblemError('forbidden', 'Only an administrator or the user may do this');
  };

  /** A user acting on their own OTP proves themself again; an administrator acting on another is logged. */
  const proveOrLog = async (ctx: HandlerContext, user: UserRecord, proof: StepUpProof, what: string, act: string) => {
    if (actorOf(ctx).id === user.id) await requireStepUp(deps, ctx, user, proof, what);
    else await logAdminAct(deps, ctx, user, act);
  };

  return [
    implement(getUsers, async () => (await listUsers(deps.store)).map(publicUser)),

    implement(getUser, async ({ params }) => publicUser(await mustExist(deps.store, params.userId))),

    implement(createUser, async ({ body }, ctx) => {
      await checkSpaces(body.spaces);
      const id = randomUUID();
      const passwordHash = await deps.passwords.hash(body.password);
      try {
        await deps.store.transaction((tx) =>
          insertUser(tx, {
            id,
            username: body.username,
            passwordHash,
            email: body.email ?? null,
            phone: body.phone ?? null,
            enabled: body.enabled ?? true,
            roles: body.roles,
            spaces: body.spaces,
            actor: actorName(ctx),
          }),
        );
      } catch (err) {
        if (duplicate(err)) throw new ProblemError('conflict', `The username ${body.username} is taken`);
        throw err;
      }
      announce(ctx, 'created', id);
      return publicUser(await mustExist(deps.store, id));
    }),

    implement(updateUser, async ({ params, body }, ctx) => {
      const user = await mustExist(deps.store, params.userId);
      const self = actorOf(ctx).id === user.id;
      if (self && body.password !== undefined)
        throw new ProblemError('conflict', 'Change your own password with POST /api/users/reset-password');
      const wasAdmin = user.roles.includes('admin') && user.enabled;
      await guardAdmins(ctx, user.id, wasAdmin && (body.enabled === false || (body.roles !== undefined && !body.roles.includes('admin'))));
      await checkSpaces(body.spaces);
      const passwordHash = body.password === undefined ? undefined : await deps.passwords.hash(body.password);
      try {
        await deps.store.transaction(async (tx) => {
          // A password an administrator set for someone else is theirs to replace (requirePasswordReset).
          await updateUserFields(
            tx,
            user.id,
            {
              username: body.username,
              passwordHash,
              requirePasswordReset: passwordHash !== undefined,
              email: body.email,
              phone: body.phone,
              enabled: body.enabled,
            },
            actorName(ctx),
          );
          await setRolesAndSpaces(tx, user.id, body.roles, body.spaces);
        });
      } catch (err) {
        if (duplicate(err)) throw new ProblemError('conflict', `The username ${body.username} is taken`);
        throw err;
      }
      if (body.enabled === false || passwordHash !== undefined) await endSessions(ctx, user.id);
      if (passwordHash !== undefined) await logAdminAct(deps, ctx, user, 'password set');
      announce(ctx, 'updated', user.id);
      return null;
    }),

    implement(deleteUser, async ({ params }, ctx) => {
      const user = await mustExist(deps.store, params.userId);
      await guardAdmins(ctx, user.id, user.roles.includes('admin') && user.enabled);
      if (actorOf(ctx).id === user.id) throw new ProblemError('conflict', 'You cannot delete yourself');
      await endSessions(ctx, user.id);
      await deps.store.query('delete from auth.users where id = $1', [user.id]);
      announce(ctx, 'deleted', user.id);
      return null;
    }),

    implement(enableUserOtp, async ({ params, body }, ctx) => {
      selfOrAdmin(ctx, params.userId);
      const user = await mustExist(deps.store, params.userId);
      await proveOrLog(
        ctx,
        user,
        body ?? {},
        user.otpSecret ? 'Enrolling TOTP again' : 'Enrolling TOTP',
        user.otpSecret ? 'TOTP enrolled again' : 'TOTP enrolled',
      );
      const secret = newTotpSecret();
      await setOtpSecret(deps.store, user.id, deps.secrets.seal(secret, totpPurpose(user.id)), actorName(ctx));
      announce(ctx, 'updated', user.id);
      return { otp_type: 'TOTP' as const, secret, otpauth_url: totpUrl(secret, user.username) };
    }),

    implement(disableUserOtp, async ({ params, body }, ctx) => {
      selfOrAdmin(ctx, params.userId);
      const user = await mustExist(deps.store, params.userId);
      await proveOrLog(ctx, user, body ?? {}, 'Turning TOTP off', 'TOTP turned off');
      await setOtpSecret(deps.store, user.id, null, actorName(ctx));
      announce(ctx, 'updated', user.id);
      return null;
    }),
  ];
}
