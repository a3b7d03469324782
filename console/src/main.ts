/** The console's entry: draws the app into the page the gateway serves at `/console/`. */
import { html } from 'htm/preact';
import { render } from 'preact';
import { App } from './app.ts';

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(html`<${App} />`, root);
}
