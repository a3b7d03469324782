/** Sites of the space: whether each answers the hub, when it last did, what waits on its uplink, whether it is in step. */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, currentSpace } from '../../api.ts';
import { Alert, useAction, when } from '../common.ts';
import { Wide } from './shared.ts';

/** A site as `GET /api/sites` answers. */
type Site = {
  name: string;
  reachable: boolean;
  lastSeen: string | null;
  backlog: number;
  inSync: boolean;
  warnings: { code: string; detail: string }[];
};

/** The sites screen: the sites the connections of the current space belong to. */
export function Sites() {
  const [sites, setSites] = useState<Site[] | null>(null);
  const [load, busy, error] = useAction();
  const reload = () => load(async () => setSites(await api<Site[]>('GET', '/api/sites')));
  useEffect(() => {
    void reload();
  }, []);
  return html`<section aria-labelledby="h-sites">
    <div class="heading">
      <h2 id="h-sites">Sites of the space ${currentSpace.value}</h2>
      <button type="button" class="secondary" disabled=${busy} onClick=${() => void reload()}>Refresh</button>
    </div>
    <${Alert} message=${error} />
    ${sites?.length === 0 ? html`<p>No connection of this space belongs to a site yet.</p>` : null}
    ${
      sites && sites.length > 0
        ? html`<${Wide} label="Sites"><table><caption class="sr-only">Sites</caption>
          <thead><tr><th scope="col">Site</th><th scope="col">Reachable</th><th scope="col">Last seen</th><th scope="col">Backlog</th><th scope="col">In sync</th><th scope="col">Warnings</th></tr></thead>
          <tbody>${sites.map(
            (s) => html`<tr key=${s.name} data-site=${s.name}>
              <td>${s.name}</td>
              <td class=${s.reachable ? 'ok' : 'bad'}>${s.reachable ? 'yes' : 'no'}</td>
              <td>${when(s.lastSeen)}</td>
              <td>${s.backlog === 0 ? 'none' : `${s.backlog} events`}</td>
              <td class=${s.inSync ? 'ok' : 'bad'}>${s.inSync ? 'yes' : 'no: a change waits for the link'}</td>
              <td>${s.warnings.length === 0 ? 'none' : s.warnings.map((w) => `${w.code}: ${w.detail}`).join('; ')}</td>
            </tr>`,
          )}</tbody></table></${Wide}>`
        : null
    }
  </section>`;
}
