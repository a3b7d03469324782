import {
  authEvents,
  findAuthAttempts,
  findLockedUsers,
  getCurrentUser,
  getIpFilterSettings,
  getLoggedInUsers,
  ipAllowed,
  ipFilter,
  lockedUsers,
  parseIpFilter,
  ProblemError,
  setIpFilterSettings,
  unlockUser,
} from '@scada/contracts';
import { actorOf, implement, publishEvent, type Implementation } from '@scada/platform';
import { clearFailures, lockedNames } from '../store/lock.ts';
import { attemptsPage, readIpSettings, writeIpSettings } from '../store/records.ts';
import { loggedInUsernames } from '../store/sessions.ts';
import { findUser } from '../store/users.ts';
import { actorName, principalOf, type AuthDeps } from './deps.ts';

/** The IP filter, the lock listing and unlock, the auth log, live sessions and the current user. */
export function adminHandlers(deps: AuthDeps): Implementation[] {
  const locked = async () => lockedNames(deps.store);
  return [
    implement(getIpFilterSettings, async () => readIpSettings(deps.store)),
    implement(ipFilter, async () => readIpSettings(deps.store)),

    implement(setIpFilterSettings, async ({ body }, ctx) => {
      const allowedIps = (body.allowedIps ?? '').trim();
      const deniedIps = (body.deniedIps ?? '').trim();
      const { filter, errors } = parseIpFilter({ allowedIps, deniedIps });
      if (errors.length) throw new ProblemError('validation_failed', 'Some entries are not IP addresses or CIDRs', { errors });
      if (!ctx.clientIp || !ipAllowed(filter, ctx.clientIp)) {
        throw new ProblemError('would_lock_out_self', `The change would refuse your own address ${ctx.clientIp ?? ''}`.trim());
      }
      await writeIpSettings(deps.store, allowedIps, deniedIps, actorName(ctx));
      publishEvent(deps.bus, authEvents.ipUpdated, { id: null, space: null, actor: actorName(ctx) }, { requestId: ctx.requestId });
      return null;
    }),

    implement(findLockedUsers, locked),
    implement(lockedUsers, locked),
    implement(unlockUser, async ({ params }) => {
      await clearFailures(deps.store, params.username.toLowerCase());
      return null;
    }),

    implement(findAuthAttempts, async ({ query }) => {
      const page = query.page ?? 0;
      const size = query.size ?? 20;
      const { total, content } = await attemptsPage(deps.store, page, size);
      const totalPages = Math.ceil(total / size);
      return {
        content,
        number: page,
        size,
        totalElements: total,
        totalPages,
        numberOfElements: content.length,
        first: page === 0,
        last: page >= totalPages - 1,
        empty: content.length === 0,
      };
    }),

    implement(getLoggedInUsers, async () => loggedInUsernames(deps.store)),

    implement(getCurrentUser, async (_req, ctx) => {
      const user = await findUser(deps.store, { id: actorOf(ctx).id });
      if (!user) throw new ProblemError('invalid_token', 'The user no longer exists');
      const principal = await principalOf(deps, user);
      return {
        id: user.id,
        name: user.username,
        roles: principal.roles,
        spaces: principal.spaces,
        activeSpace: principal.activeSpace,
        remoteAddress: ctx.clientIp,
      };
    }),
  ];
}
