/**
 * For administrators, a tab each: user accounts, spaces with their members, the sites of the space, and
 * sign-ins (locked names and the log). The tab is the URL's second part: `#/admin/spaces/<spaceId>`.
 */
import { html } from 'htm/preact';
import { href, route } from '../router.ts';
import { SignIns } from './admin/sign_ins.ts';
import { Sites } from './admin/sites.ts';
import { Spaces } from './admin/spaces.ts';
import { Users } from './admin/users.ts';

/** The tabs, by the URL part that names each. */
const tabs = [
  ['users', 'User accounts'],
  ['spaces', 'Spaces and members'],
  ['sites', 'Sites'],
  ['sign-ins', 'Sign-ins'],
] as const;

/** The administration screen. */
export function Admin() {
  const [, tab, id] = route.value;
  const current = tabs.find(([name]) => name === tab)?.[0] ?? 'users';
  return html`<section aria-labelledby="h-admin">
    <h1 id="h-admin">Administration</h1>
    <nav class="tabs" aria-label="Administration">
      ${tabs.map(([name, label]) => html`<a href=${href('admin', name)} aria-current=${name === current ? 'page' : undefined}>${label}</a>`)}
    </nav>
    ${
      current === 'spaces'
        ? html`<${Spaces} spaceId=${id} />`
        : current === 'sites'
          ? html`<${Sites} />`
          : current === 'sign-ins'
            ? html`<${SignIns} />`
            : html`<${Users} />`
    }
  </section>`;
}
