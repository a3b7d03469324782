/** What an operator does to alarms (acknowledge, shelve, unshelve, out of service, in service), each in a dialog, and who may. */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api.ts';
import { reloadAlarms, type ActiveAlarm, type AlarmState } from '../alarms.ts';
import { stage } from '../session.ts';
import { Modal, useAction } from './common.ts';

const rank: Record<string, number> = { viewer: 1, operator: 2, editor: 3, admin: 4 };

/** Whether the signed-in user holds `role` or a higher one (the operations' access rules). */
export function roleAtLeast(role: 'operator' | 'editor'): boolean {
  const s = stage.value;
  return s.kind === 'signed-in' && s.me.roles.some((r) => (rank[r] ?? 0) >= (rank[role] ?? 0));
}

/** A state in words. */
export const stateWords: Record<AlarmState, string> = {
  normal: 'Normal',
  unacknowledged: 'Unacknowledged',
  acknowledged: 'Acknowledged',
  rtn_unacknowledged: 'Returned to normal, unacknowledged',
  shelved: 'Shelved',
  out_of_service: 'Out of service',
};

/** An action on alarms. */
export type AlarmAction = 'ack' | 'shelve' | 'unshelve' | 'out-of-service' | 'in-service';

const titles: Record<AlarmAction, string> = {
  ack: 'Acknowledge',
  shelve: 'Shelve',
  unshelve: 'Unshelve',
  'out-of-service': 'Take out of service',
  'in-service': 'Put in service',
};

/** The actions the user's role allows on an alarm in its state. */
export function actionsFor(a: ActiveAlarm): AlarmAction[] {
  const out: AlarmAction[] = [];
  if (roleAtLeast('operator')) {
    if (a.state === 'unacknowledged' || a.state === 'rtn_unacknowledged') out.push('ack');
    if (a.state === 'shelved') out.push('unshelve');
    else if (a.state !== 'out_of_service') out.push('shelve');
  }
  if (roleAtLeast('editor')) out.push(a.state === 'out_of_service' ? 'in-service' : 'out-of-service');
  return out;
}

/** The label of an action's button on one alarm. */
export const actionLabel = (action: AlarmAction) => titles[action];

/** Shelving times offered, in minutes; those above the platform's cap are left out and the cap added. */
const shelveChoices = [15, 30, 60, 120, 240, 480];

const minutesInWords = (m: number) => (m % 60 === 0 ? `${m / 60} hour${m === 60 ? '' : 's'}` : `${m} minutes`);

/** The dialog of an action on one alarm or (acknowledgement) several; the list updates from the live stream. */
export function ActionDialog(props: { action: AlarmAction; alarms: ActiveAlarm[]; shelveMax: number; onClose: () => void }) {
  const { action, alarms, shelveMax, onClose } = props;
  const [comment, setComment] = useState('');
  const choices = [...shelveChoices.filter((m) => m < shelveMax), shelveMax];
  const [minutes, setMinutes] = useState(String(Math.min(60, shelveMax)));
  const [run, busy, error] = useAction();
  const one = alarms.length === 1 ? alarms[0] : undefined;
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      try {
        if (action === 'ack' && !one)
          await api('POST', '/api/alarms/ack', { body: { alarmIds: alarms.map((a) => a.alarmId), comment: comment || undefined } });
        else if (action === 'shelve')
          await api('POST', `/api/alarms/${one?.alarmId}/shelve`, { body: { minutes: Number(minutes), reason: comment } });
        else await api('POST', `/api/alarms/${one?.alarmId}/${action}`, { body: comment ? { comment } : {} });
      } catch (err) {
        // Someone else moved the alarm first: the platform says from which state.
        if (err instanceof ApiError && err.code === 'conflict')
          throw new ApiError(409, 'conflict', `Not done: ${String(err.problem.detail ?? 'the alarm changed meanwhile')}.`, err.problem);
        throw err;
      }
      await reloadAlarms();
      onClose();
    });
  };
  const title = `${titles[action]} ${one ? one.name : `${alarms.length} alarms`}`;
  return html`<${Modal} title=${title} onClose=${onClose}>
    <form onSubmit=${submit}>
      ${one ? html`<p>${one.message}</p>` : html`<ul>${alarms.map((a) => html`<li key=${a.alarmId}>${a.name}: ${a.message}</li>`)}</ul>`}
      ${
        action === 'shelve'
          ? html`<div class="field">
              <label for="f-shelve-minutes">Shelve for</label>
              <select id="f-shelve-minutes" value=${minutes} onChange=${(e: Event) => setMinutes((e.target as HTMLSelectElement).value)}>
                ${choices.map((m) => html`<option value=${String(m)}>${minutesInWords(m)}</option>`)}
              </select>
              <small>At most ${shelveMax} minutes, the platform's limit.</small>
            </div>`
          : null
      }
      <div class="field">
        <label for="f-alarm-comment">${action === 'shelve' ? 'Reason' : 'Comment (optional)'}</label>
        <textarea id="f-alarm-comment" rows="3" maxlength="1000" required=${action === 'shelve'} value=${comment}
          onInput=${(e: Event) => setComment((e.target as HTMLTextAreaElement).value)}></textarea>
      </div>
      ${error ? html`<p class="alert error" role="alert">${error}</p>` : null}
      <button type="submit" disabled=${busy}>${busy ? 'Working…' : titles[action]}</button>
      <button type="button" class="secondary" onClick=${onClose}>Cancel</button>
    </form>
  <//>`;
}
