import { randomBytes } from 'node:crypto';
import { deleteUsersByIds, ProblemError, resetUserPassword } from '@scada/contracts';
import { actorOf, implement, type Implementation } from '@scada/platform';
import { deleteUserRows, existingUserIds, lockEnabledAdmins } from '../store/memberships.ts';
import { revokeUserSessions } from '../store/sessions.ts';
import { findUser, updateUserFields } from '../store/users.ts';
import { actorName, announceRevoked, announceUser, endUserSessions, type AuthDeps } from './deps.ts';
import { keepAdmins } from './memberships.ts';
import { logAdminAct } from './step_up.ts';

/** An administrator's password reset of another user, and the deletion of several users at once. */
export function userAdminHandlers(deps: AuthDeps): Implementation[] {
  return [
    implement(resetUserPassword, async ({ params, body }, ctx) => {
      const user = await findUser(deps.store, { username: params.username });
      if (!user) throw new ProblemError('not_found', `No user ${params.username}`);
      if (user.id === actorOf(ctx).id) throw new ProblemError('conflict', 'Change your own password with POST /api/users/reset-password');
      const chosen = body?.newPassword;
      // Without a password from the administrator, one nobody knows: the old one stops working, and a
      // sign-in attempt costs the same time as any other.
      const passwordHash = await deps.passwords.hash(chosen ?? randomBytes(32).toString('base64url'));
      await updateUserFields(deps.store, user.id, { passwordHash, requirePasswordReset: true }, actorName(ctx));
      await endUserSessions(deps, ctx, user.id);
      await logAdminAct(deps, ctx, user, chosen === undefined ? 'password revoked' : 'temporary password set');
      announceUser(deps, ctx, 'updated', user.id);
      return null;
    }),

    implement(deleteUsersByIds, async ({ query }, ctx) => {
      const ids = [...new Set(query.userIds)];
      const ended = await deps.store.transaction(async (tx) => {
        const admins = await lockEnabledAdmins(tx);
        const found = await existingUserIds(tx, ids);
        const missing = ids.filter((id) => !found.has(id));
        if (missing.length > 0)
          throw new ProblemError('not_found', `No user ${missing.join(', ')}; nobody was deleted`, { extensions: { missing } });
        keepAdmins(ctx, admins, ids);
        const sessions = [];
        for (const id of ids) sessions.push(...(await revokeUserSessions(tx, id)));
        await deleteUserRows(tx, ids);
        return sessions;
      });
      for (const { sid, until } of ended) announceRevoked(deps, ctx, sid, until);
      for (const id of ids) announceUser(deps, ctx, 'deleted', id);
      return null;
    }),
  ];
}
