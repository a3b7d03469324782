/** What the administration screens share: the shapes the API answers, the role names, a confirmation dialog. */
import { html } from 'htm/preact';
import type { ComponentChildren } from 'preact';
import { Alert, Modal, useAction } from '../common.ts';

/** A user as `GET /api/users` answers: never a password or a secret. */
export type User = {
  id: string;
  username: string;
  email: string | null;
  enabled: boolean;
  roles: string[];
  spaces: string[];
  otpType: string;
  requirePasswordReset: boolean;
};

/** A space as `GET /api/spaces` answers. */
export type Space = { id: string; name: string };

/** The platform's roles, in increasing power; a role applies in every space its user belongs to. */
export const roleNames = ['viewer', 'operator', 'editor', 'admin'] as const;

/**
 * Asks before an action that cannot be taken back (or locks someone out): a native modal dialog that says
 * what will happen, with the action's own name on its button and Cancel beside it. It closes when the
 * action is done, and shows the platform's sentence when it is refused.
 */
export function Confirm(props: {
  title: string;
  confirm: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const [run, busy, error] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await props.onConfirm();
      props.onClose();
    });
  };
  return html`<${Modal} title=${props.title} onClose=${props.onClose}>
    <form method="dialog" onSubmit=${submit}>
      ${props.children}
      <${Alert} message=${error} />
      <button type="submit" class="danger" disabled=${busy}>${busy ? 'Working…' : props.confirm}</button>
      <button type="button" class="secondary" onClick=${props.onClose}>Cancel</button>
    </form>
  </${Modal}>`;
}

/** A table that may be wider than a phone's screen scrolls inside its own box, never the page. */
export function Wide({ label, children }: { label: string; children: ComponentChildren }) {
  return html`<div class="wide" role="region" aria-label=${label} tabindex="0">${children}</div>`;
}
