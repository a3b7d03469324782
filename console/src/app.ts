/** The console's frame: sign-in stages, then the space picker, the navigation and the screen the URL names. */
import { html } from 'htm/preact';
import { useEffect } from 'preact/hooks';
import { currentSpace, sessionEnded } from './api.ts';
import { follow, liveStatus, stopFollowing } from './live.ts';
import { route, href, routeQuery } from './router.ts';
import { canEdit, chooseSpace, isAdmin, signOut, stage, startSession, type Space } from './session.ts';
import { lazyView } from './views/lazy.ts';
import { ConnectionForm, Connections } from './views/connections.ts';
import { AlarmBanner } from './views/alarm_banner.ts';
import { ChangePassword, OtpStep, SignIn } from './views/sign_in.ts';

// Screens most visits never open are chunks of their own, so the first page loads less.
const Scripts = lazyView(() => import('./views/scripts.ts').then((m) => m.Scripts));
const ScriptView = lazyView<{ id?: string }>(() => import('./views/scripts.ts').then((m) => m.ScriptView));
const Admin = lazyView(() => import('./views/admin.ts').then((m) => m.Admin));
const Alarms = lazyView<{ tab: string }>(() => import('./views/alarms.ts').then((m) => m.Alarms));
// A connection's screen (model tree, live values, write and control dialogs) opens from the list.
const ConnectionView = lazyView<{ id: string; tab: string }>(() => import('./views/connection.ts').then((m) => m.ConnectionView));
const Trends = lazyView<{ query: string }>(() => import('./views/trends.ts').then((m) => m.Trends));
const Displays = lazyView(() => import('./views/displays/dashboard.ts').then((m) => m.Displays));
const Dashboard = lazyView<{ id: string }>(() => import('./views/displays/dashboard.ts').then((m) => m.Dashboard));
const Author = lazyView(() => import('./views/displays/dashboard.ts').then((m) => m.Author));

/** The whole console. */
export function App() {
  useEffect(() => {
    void startSession();
  }, []);
  useEffect(() => {
    if (sessionEnded.value > 0 && stage.peek().kind === 'signed-in')
      stage.value = { kind: 'signed-out', message: 'Your session has ended. Please sign in again.' };
  }, [sessionEnded.value]);
  const s = stage.value;
  const space = currentSpace.value;
  const signedIn = s.kind === 'signed-in';
  useEffect(() => {
    if (signedIn && space) follow(space);
    else stopFollowing();
    return stopFollowing;
  }, [signedIn, space]);
  if (s.kind === 'loading') return html`<main id="main"><p role="status">Loading the console…</p></main>`;
  if (s.kind === 'signed-out') return html`<${SignIn} message=${s.message} />`;
  if (s.kind === 'otp') return html`<${OtpStep} username=${s.username} otpToken=${s.otpToken} />`;
  if (s.kind === 'change-password') return html`<${ChangePassword} />`;
  return html`<div class="shell">
    <a class="skip" href="#main">Skip to content</a>
    <header>
      <span class="brand">SCADA console</span>
      <nav aria-label="Main">
        <a href=${href('connections')} aria-current=${route.value[0] === 'connections' || route.value.length === 0 ? 'page' : undefined}>Connections</a>
        <a href=${href('scripts')} aria-current=${route.value[0] === 'scripts' ? 'page' : undefined}>Scripts</a>
        <a href=${href('alarms')} aria-current=${route.value[0] === 'alarms' ? 'page' : undefined}>Alarms</a>
        <a href=${href('trends')} aria-current=${route.value[0] === 'trends' ? 'page' : undefined}>Trends</a>
        <a href=${href('displays')} aria-current=${route.value[0] === 'displays' ? 'page' : undefined}>Displays</a>
        ${isAdmin() ? html`<a href=${href('admin')} aria-current=${route.value[0] === 'admin' ? 'page' : undefined}>Administration</a>` : null}
      </nav>
      <${SpacePicker} spaces=${s.spaces} />
      <span class="who">${s.me.name}</span>
      <button type="button" class="secondary" onClick=${() => void signOut()}>Sign out</button>
    </header>
    ${space ? html`<${AlarmBanner} />` : null}
    ${liveStatus.value.ended ? html`<p class="alert warn" role="status">${liveStatus.value.ended}</p>` : null}
    <main id="main" tabindex="-1">${space ? html`<${Screen} key=${space} />` : html`<p>You belong to no space. Ask an administrator to add you to one.</p>`}</main>
  </div>`;
}

/** Chooses the space the console works in. */
function SpacePicker({ spaces }: { spaces: Space[] }) {
  return html`<div class="space-picker">
    <label for="space">Space</label>
    <select id="space" value=${currentSpace.value ?? ''} onChange=${(e: Event) => chooseSpace((e.target as HTMLSelectElement).value)}>
      ${spaces.map((sp) => html`<option value=${sp.id}>${sp.name}</option>`)}
    </select>
  </div>`;
}

/** The screen the URL's fragment names. */
function Screen() {
  const [first, second, third] = route.value;
  if (first === 'connections' && second === 'new') return html`<${ConnectionForm} key="new" />`;
  if (first === 'connections' && second && third === 'edit') return html`<${ConnectionForm} key=${`edit ${second}`} id=${second} />`;
  if (first === 'connections' && second) return html`<${ConnectionView} key=${second} id=${second} tab=${third ?? 'model'} />`;
  if (first === 'scripts' && second === 'new') return html`<${ScriptView} />`;
  if (first === 'scripts' && second) return html`<${ScriptView} id=${second} key=${second} />`;
  if (first === 'scripts') return html`<${Scripts} />`;
  if (first === 'alarms') return html`<${Alarms} tab=${second ?? 'active'} />`;
  if (first === 'admin' && isAdmin()) return html`<${Admin} />`;
  if (first === 'trends') return html`<${Trends} key=${routeQuery.value} query=${routeQuery.value} />`;
  if (first === 'displays' && second === 'author' && canEdit()) return html`<${Author} />`;
  if (first === 'displays' && second) return html`<${Dashboard} id=${second} key=${second} />`;
  if (first === 'displays') return html`<${Displays} />`;
  return html`<${Connections} />`;
}
