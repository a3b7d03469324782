import {
  addUserRole,
  addUserSpace,
  getActiveSpaceUsernames,
  getUserDefaultSpace,
  getUserRole,
  getUserRoles,
  getUserRolesBySpace,
  getUserSpace,
  getUserSpaces,
  ProblemError,
  removeUserRole,
  removeUserSpace,
  roleNames,
  setUserDefaultSpace,
} from '@scada/contracts';
import { actorOf, implement, type HandlerContext, type Implementation, type Queryable } from '@scada/platform';
import {
  chooseDefaultSpace,
  grantRole,
  grantSpace,
  listRoles,
  lockEnabledAdmins,
  revokeRole,
  revokeSpace,
  usernamesIn,
} from '../store/memberships.ts';
import { findSpace, listSpaces } from '../store/spaces.ts';
import { findUser, type UserRecord } from '../store/users.ts';
import { actorName, announceUser, principalOf, type AuthDeps } from './deps.ts';

/**
 * An administrator's view of one user's spaces and roles, one at a time, and of their default space.
 * Every change is announced, so gateways apply it from the user's next request.
 */
export function membershipHandlers(deps: AuthDeps): Implementation[] {
  const userById = async (db: Queryable, id: string) =>
    (await findUser(db, { id })) ?? Promise.reject(new ProblemError('not_found', `No user ${id}`));
  const userByName = async (username: string) =>
    (await findUser(deps.store, { username })) ?? Promise.reject(new ProblemError('not_found', `No user ${username}`));
  const spaceById = async (id: string) =>
    (await findSpace(deps.store, id)) ?? Promise.reject(new ProblemError('not_found', `No space ${id}`));
  const roleOf = (id: string) => {
    if (!(roleNames as readonly string[]).includes(id)) throw new ProblemError('not_found', `No role ${id}`);
    return id;
  };

  return [
    implement(getUserSpaces, async ({ params }) => {
      const user = await userById(deps.store, params.userId);
      return user.spaces.length === 0 ? [] : listSpaces(deps.store, user.spaces);
    }),

    implement(addUserSpace, async ({ params, query }, ctx) => {
      const user = await userById(deps.store, params.userId);
      const space = await spaceById(query.spaceId);
      if (await grantSpace(deps.store, user.id, space.id, actorName(ctx))) announceUser(deps, ctx, 'updated', user.id);
      return space;
    }),

    implement(getUserSpace, async ({ params }) => {
      const user = await userById(deps.store, params.userId);
      if (!user.spaces.includes(params.spaceId))
        throw new ProblemError('not_found', `${user.username} does not have space ${params.spaceId}`);
      return spaceById(params.spaceId);
    }),

    implement(removeUserSpace, async ({ params }, ctx) => {
      await deps.store.transaction(async (tx) => {
        const user = await userById(tx, params.userId);
        if (!user.spaces.includes(params.spaceId))
          throw new ProblemError('not_found', `${user.username} does not have space ${params.spaceId}`);
        if (user.spaces.length === 1) throw new ProblemError('conflict', `Space ${params.spaceId} is the only space of ${user.username}`);
        await revokeSpace(tx, user.id, params.spaceId, actorName(ctx));
      });
      announceUser(deps, ctx, 'updated', params.userId);
      return null;
    }),

    implement(getUserRoles, async ({ params }) => listRoles(deps.store, (await userById(deps.store, params.userId)).roles)),

    implement(addUserRole, async ({ params, query }, ctx) => {
      const role = roleOf(query.roleId);
      const user = await userById(deps.store, params.userId);
      if (await grantRole(deps.store, user.id, role, actorName(ctx))) announceUser(deps, ctx, 'updated', user.id);
      return (await listRoles(deps.store, [role]))[0]!;
    }),

    implement(getUserRole, async ({ params }) => {
      const user = await userById(deps.store, params.userId);
      if (!(user.roles as string[]).includes(params.roleId))
        throw new ProblemError('not_found', `${user.username} does not have role ${params.roleId}`);
      return (await listRoles(deps.store, [params.roleId]))[0]!;
    }),

    implement(removeUserRole, async ({ params }, ctx) => {
      await deps.store.transaction(async (tx) => {
        const admins = await lockEnabledAdmins(tx);
        const user = await userById(tx, params.userId);
        if (!(user.roles as string[]).includes(params.roleId))
          throw new ProblemError('not_found', `${user.username} does not have role ${params.roleId}`);
        if (user.roles.length === 1) throw new ProblemError('conflict', `Role ${params.roleId} is the only role of ${user.username}`);
        if (params.roleId === 'admin') keepAdmins(ctx, admins, [user.id]);
        await revokeRole(tx, user.id, params.roleId, actorName(ctx));
      });
      announceUser(deps, ctx, 'updated', params.userId);
      return null;
    }),

    implement(getUserRolesBySpace, async ({ params, query }) => {
      const user = await userById(deps.store, params.userId);
      const { spaces } = await principalOf(deps, user);
      return spaces.includes(query.spaceId) ? listRoles(deps.store, user.roles) : [];
    }),

    implement(getActiveSpaceUsernames, async (_m, ctx) => {
      if (!ctx.space) throw new ProblemError('bad_header', 'The request names no space (X-Space)');
      return usernamesIn(deps.store, ctx.space);
    }),

    implement(getUserDefaultSpace, async ({ params }) => {
      const user = await userByName(params.username);
      const { activeSpace } = await principalOf(deps, user);
      if (activeSpace === null) throw new ProblemError('not_found', `${user.username} belongs to no space`);
      return spaceById(activeSpace);
    }),

    implement(setUserDefaultSpace, async ({ params, query }, ctx) => {
      const user = await userByName(params.username);
      const space = await spaceById(query.spaceId);
      if (!(await memberOf(deps, user, space.id)))
        throw new ProblemError('conflict', `${user.username} does not belong to space ${space.id}; give it first`);
      await chooseDefaultSpace(deps.store, user.id, space.id, actorName(ctx));
      announceUser(deps, ctx, 'updated', user.id);
      return null;
    }),
  ];
}

/** Whether a user belongs to a space; administrators belong to every space. */
async function memberOf(deps: AuthDeps, user: UserRecord, spaceId: string): Promise<boolean> {
  return (await principalOf(deps, user)).spaces.includes(spaceId);
}

/**
 * The guards every change that takes administrators away keeps: the caller never takes their own
 * administrator role or account, and at least one enabled administrator stays. `admins` are the enabled
 * administrators, locked by the caller's transaction.
 */
export function keepAdmins(ctx: HandlerContext, admins: readonly string[], leaving: readonly string[]): void {
  if (leaving.includes(actorOf(ctx).id)) throw new ProblemError('conflict', 'You cannot delete or demote yourself');
  if (admins.length > 0 && admins.every((id) => leaving.includes(id)))
    throw new ProblemError('conflict', 'The last enabled administrator must stay');
}
