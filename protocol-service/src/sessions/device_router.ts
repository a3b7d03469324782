/**
 * Where an operation on a connection's device runs: here (this replica holds the connection), at the
 * replica that holds it (forwarded on that replica's own subject), or nowhere (nobody holds it, so the
 * device is not connected: 409 `not_connected`). A connection that is not in the space is 404.
 */
import { centralSite, ProblemError } from '@scada/contracts';
import { notFound, type Store } from '@scada/platform';
import { connectionHolder } from '../store/sessions.ts';
import type { LiveDevice } from './live_device.ts';
import type { Session } from './session.ts';
import type { Supervisor } from './supervisor.ts';

/** The route of one device operation. */
export type DeviceRoute =
  | { kind: 'local'; session: Session; device: LiveDevice | null }
  | { kind: 'forwarded'; owner: string }
  | { kind: 'site'; site: string }
  | { kind: 'not_connected' };

/** The 409 for a connection whose device is not connected now. */
export function notConnected(id: string): ProblemError {
  return new ProblemError('not_connected', `Connection ${id} is not connected to its device now`);
}

/** The 404 for a connection not in the space. */
export function connectionNotFound(id: string): ProblemError {
  return notFound('connection', id);
}

export type DeviceRouter = {
  /**
   * The route for a connection. `forward: false` (a request already forwarded to this replica) never
   * forwards again: a connection held elsewhere by now is not connected here.
   */
  route(space: string, id: string, forward: boolean): Promise<DeviceRoute>;
  /** Whether a site answers the hub now (a request to one that does not is refused at once). */
  reachable(site: string): boolean;
  /** Nobody at a site took a request: it counts as unreachable until it answers a ping again. */
  lost(site: string): void;
};

export function deviceRouter(deps: {
  store: Store;
  supervisor: Supervisor;
  instance: string;
  site?: string;
  reachable?: (site: string) => boolean;
  lost?: (site: string) => void;
}): DeviceRouter {
  const here = deps.site ?? centralSite;
  return {
    reachable: (site) => deps.reachable?.(site) ?? false,
    lost: (site) => deps.lost?.(site),
    async route(space, id, forward) {
      const session = deps.supervisor.local(space, id);
      if (session) return { kind: 'local', session, device: session.device };
      const held = await connectionHolder(deps.store, space, id);
      if (!held) throw connectionNotFound(id);
      // A connection of a site is that site's protocol service's to talk to; the hub forwards to it.
      if (held.site !== here) {
        if (!forward || here !== centralSite) return { kind: 'not_connected' };
        return { kind: 'site', site: held.site };
      }
      if (!forward || !held.owner || held.owner === deps.instance) return { kind: 'not_connected' };
      return { kind: 'forwarded', owner: held.owner };
    },
  };
}
