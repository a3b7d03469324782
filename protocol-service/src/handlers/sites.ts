/**
 * The hub's operations for sites: the sites of a space (`GET /api/sites`), and what a site copies of its
 * connections (between services only; `sites/site.ts` asks for them).
 */
import { listSites, ProblemError, siteConnectionChunk, siteConnectionCopy, siteConnections } from '@scada/contracts';
import { implement, spaceOf, type Implementation, type Store } from '@scada/platform';
import type { SiteHub } from '../sites/hub.ts';
import { siteCopy, siteCopyPart, siteVersions } from '../store/site_copies.ts';

export function siteHandlers(deps: { store: Store; hub: SiteHub }): Implementation[] {
  const gone = (id: string) => new ProblemError('not_found', `Connection ${id} is not one of the site's`);
  return [
    implement(listSites, async (_req, ctx) => deps.hub.statuses(spaceOf(ctx))),
    implement(siteConnections, async (req) => siteVersions(deps.store, req.body.site)),
    implement(siteConnectionCopy, async (req) => {
      const copy = await siteCopy(deps.store, req.body.site, req.body.space, req.body.id);
      if (!copy) throw gone(req.body.id);
      return copy;
    }),
    implement(siteConnectionChunk, async (req) => {
      const row = await siteCopyPart(deps.store, req.body.site, req.body.space, req.body.id, req.body.table, req.body.key);
      if (row === null) throw gone(req.body.id);
      return { row };
    }),
  ];
}
