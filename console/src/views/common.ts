/** Small pieces every screen uses: an error line, a busy button, a form field, a modal dialog. */
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { messageOf } from '../api.ts';

/** A message read out by screen readers when it appears. */
export function Alert({ message, kind = 'error' }: { message?: string | null; kind?: 'error' | 'info' }) {
  if (!message) return null;
  return html`<p class=${`alert ${kind}`} role=${kind === 'error' ? 'alert' : 'status'}>${message}</p>`;
}

/** Runs an async action with its progress and its error as state: `[run, busy, error, setError]`. */
export function useAction(): [(action: () => Promise<unknown>) => Promise<boolean>, boolean, string | null, (e: string | null) => void] {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (err) {
      setError(messageOf(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return [run, busy, error, setError];
}

/** A labelled input. */
export function Field(props: {
  label: string;
  name: string;
  type?: string;
  value?: string;
  required?: boolean;
  autocomplete?: string;
  onInput?: (v: string) => void;
  hint?: string;
}) {
  const id = `f-${props.name}`;
  return html`<div class="field">
    <label for=${id}>${props.label}</label>
    <input
      id=${id}
      name=${props.name}
      type=${props.type ?? 'text'}
      value=${props.value}
      required=${props.required}
      autocomplete=${props.autocomplete ?? 'off'}
      aria-describedby=${props.hint ? `${id}-hint` : undefined}
      onInput=${(e: Event) => props.onInput?.((e.target as HTMLInputElement).value)}
    />
    ${props.hint ? html`<small id=${`${id}-hint`}>${props.hint}</small>` : null}
  </div>`;
}

/** A native modal dialog (focus kept inside, Escape closes it), open while mounted. */
export function Modal({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return html`<dialog ref=${ref} aria-labelledby="dialog-title" onClose=${onClose}>
    <h2 id="dialog-title">${title}</h2>
    ${children}
  </dialog>`;
}

/**
 * A time on the 24-hour clock with milliseconds (`14:05:09.123`), for device times as for the platform's;
 * the date before it (`2026-11-28 14:05:09.123`) when it is not today.
 */
export function when(iso?: string | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number, width = 2) => String(n).padStart(width, '0');
  const time = `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
  const now = new Date();
  const today = d.getFullYear() === now.getFullYear() && d.getMonth() === now.getMonth() && d.getDate() === now.getDate();
  return today ? time : `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${time}`;
}

/** A value as text: JSON for what is not a string. */
export function show(value: unknown): string {
  if (value === undefined) return '—';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
