/**
 * The alarm screens (`#/alarms`, `#/alarms/journal`): the active alarms, filtered and acted on by role,
 * moving with the live stream; and the journal of every transition, paged, with its CSV.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { activeAlarms, alarmsError, waitsForAck, type ActiveAlarm, type AlarmState } from '../alarms.ts';
import { configChanges } from '../live.ts';
import { href } from '../router.ts';
import { ActionDialog, actionLabel, actionsFor, roleAtLeast, stateWords, type AlarmAction } from './alarm_actions.ts';
import { Journal } from './alarm_journal.ts';
import { Alert, show, useAction, when } from './common.ts';

/** An alarm group as `/api/alarm-groups` answers it. */
export type AlarmGroup = { id: string; name: string; projectId: string };

/** The filters both tabs share; empty strings are no filter. */
export type AlarmFilters = { groupId: string; priority: string; state: string; text: string };

const noFilters: AlarmFilters = { groupId: '', priority: '', state: '', text: '' };

/** The alarm screen with its two tabs. */
export function Alarms({ tab }: { tab: string }) {
  const [groups, setGroups] = useState<AlarmGroup[]>([]);
  const [shelveMax, setShelveMax] = useState(480);
  const [filters, setFilters] = useState<AlarmFilters>(noFilters);
  const [load, , loadError] = useAction();
  useEffect(() => {
    void load(async () => {
      setGroups(await api<AlarmGroup[]>('GET', '/api/alarm-groups'));
      setShelveMax((await api<{ shelveMaxMinutes: number }>('GET', '/api/alarms/settings')).shelveMaxMinutes);
    });
  }, [configChanges.value]);
  const journal = tab === 'journal';
  return html`<section aria-labelledby="h-alarms">
    <h1 id="h-alarms">Alarms</h1>
    <nav class="tabs" aria-label="Alarm views">
      <a href=${href('alarms')} aria-current=${journal ? undefined : 'page'}>Active alarms</a>
      <a href=${href('alarms', 'journal')} aria-current=${journal ? 'page' : undefined}>Journal</a>
    </nav>
    <${Alert} message=${loadError} />
    <${Filters} groups=${groups} filters=${filters} onChange=${setFilters} journal=${journal} />
    ${journal ? html`<${Journal} filters=${filters} groups=${groups} />` : html`<${ActiveList} filters=${filters} groups=${groups} shelveMax=${shelveMax} />`}
  </section>`;
}

const states: AlarmState[] = ['unacknowledged', 'acknowledged', 'rtn_unacknowledged', 'shelved', 'out_of_service'];

/** Group, priority, state and text, as native labelled controls. */
function Filters(props: { groups: AlarmGroup[]; filters: AlarmFilters; onChange: (f: AlarmFilters) => void; journal: boolean }) {
  const { groups, filters, onChange, journal } = props;
  const set = (patch: Partial<AlarmFilters>) => onChange({ ...filters, ...patch });
  const value = (e: Event) => (e.target as HTMLInputElement | HTMLSelectElement).value;
  return html`<form class="row filters" role="search" aria-label="Filter alarms" onSubmit=${(e: Event) => e.preventDefault()}>
    <div class="field">
      <label for="f-alarm-group">Group</label>
      <select id="f-alarm-group" value=${filters.groupId} onChange=${(e: Event) => set({ groupId: value(e) })}>
        <option value="">All groups</option>
        ${groups.map((g) => html`<option value=${g.id} key=${g.id}>${g.name}</option>`)}
      </select>
    </div>
    <div class="field">
      <label for="f-alarm-priority">Priority up to</label>
      <input id="f-alarm-priority" type="number" min="1" max="255" inputmode="numeric" value=${filters.priority}
        onInput=${(e: Event) => set({ priority: value(e) })} />
    </div>
    <div class="field">
      <label for="f-alarm-state">${journal ? 'Into state' : 'State'}</label>
      <select id="f-alarm-state" value=${filters.state} onChange=${(e: Event) => set({ state: value(e) })}>
        <option value="">All states</option>
        ${(journal ? (['normal', ...states] as AlarmState[]) : states).map((s) => html`<option value=${s} key=${s}>${stateWords[s]}</option>`)}
      </select>
    </div>
    <div class="field">
      <label for="f-alarm-text">Text</label>
      <input id="f-alarm-text" type="search" value=${filters.text} onInput=${(e: Event) => set({ text: value(e) })} />
    </div>
  </form>`;
}

/** Whether an alarm passes the filters (the list holds every alarm that is not normal). */
function matches(a: ActiveAlarm, f: AlarmFilters): boolean {
  const priority = Number.parseInt(f.priority, 10);
  const text = f.text.trim().toLowerCase();
  return (
    (!f.groupId || a.groupId === f.groupId) &&
    (!(priority > 0) || a.priority <= priority) &&
    (!f.state || a.state === f.state) &&
    (!text || `${a.name} ${a.message}`.toLowerCase().includes(text))
  );
}

/** The active alarms: one row each, most urgent first; checkboxes and buttons only for those whose role acts. */
function ActiveList({ filters, groups, shelveMax }: { filters: AlarmFilters; groups: AlarmGroup[]; shelveMax: number }) {
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [dialog, setDialog] = useState<{ action: AlarmAction; alarms: ActiveAlarm[] } | null>(null);
  const list = activeAlarms.value.filter((a) => matches(a, filters));
  const operator = roleAtLeast('operator');
  const ackable = list.filter((a) => waitsForAck(a.state));
  // Only alarms still shown and still waiting count as chosen.
  const chosen = ackable.filter((a) => selected.has(a.alarmId));
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  };
  const groupName = (id: string) => groups.find((g) => g.id === id)?.name ?? '';
  return html`
    <${Alert} message=${alarmsError.value} />
    ${
      operator
        ? html`<div class="row bulk">
            <label class="check"><input type="checkbox" checked=${ackable.length > 0 && chosen.length === ackable.length} disabled=${ackable.length === 0}
              onChange=${(e: Event) => setSelected(new Set((e.target as HTMLInputElement).checked ? ackable.map((a) => a.alarmId) : []))} />
              Select all waiting for acknowledgement</label>
            <button type="button" disabled=${chosen.length === 0} onClick=${() => setDialog({ action: 'ack', alarms: chosen })}>
              Acknowledge selected (${chosen.length})
            </button>
          </div>`
        : null
    }
    ${list.length === 0 ? html`<p>No alarm${activeAlarms.value.length > 0 ? ' matches the filters' : ' is active'}.</p>` : null}
    ${
      list.length > 0
        ? html`<table class="alarms">
          <caption class="sr-only">Active alarms, most urgent first</caption>
          <thead><tr>
            ${operator ? html`<th scope="col"><span class="sr-only">Select</span></th>` : null}
            <th scope="col">Alarm</th><th scope="col">State</th>${operator ? html`<th scope="col">Actions</th>` : null}
          </tr></thead>
          <tbody>${list.map(
            (a) => html`<tr key=${a.alarmId} class=${`alarm-row ${a.state}`}>
              ${
                operator
                  ? html`<td>${
                      waitsForAck(a.state)
                        ? html`<input type="checkbox" aria-label=${`Select ${a.name}`} checked=${selected.has(a.alarmId)}
                            onChange=${(e: Event) => toggle(a.alarmId, (e.target as HTMLInputElement).checked)} />`
                        : null
                    }</td>`
                  : null
              }
              <td><strong>${a.name}</strong> <span class="badge">P${a.priority}</span> ${groupName(a.groupId)}
                <div>${a.message}</div><div class="muted">Value ${show(a.value)}</div></td>
              <td><span class="state">${stateWords[a.state]}</span><div class="muted">since ${when(a.since)}</div>
                ${a.state === 'shelved' ? html`<div class="muted">${a.shelvedUntil ? `until ${when(a.shelvedUntil)}: ` : ''}${a.shelveReason}</div>` : null}
                ${a.by ? html`<div class="muted">by ${a.by}</div>` : null}</td>
              ${
                operator
                  ? html`<td class="actions">${actionsFor(a).map(
                      (
                        action,
                      ) => html`<button type="button" class="small secondary" key=${action} aria-label=${`${actionLabel(action)} ${a.name}`}
                        onClick=${() => setDialog({ action, alarms: [a] })}>${actionLabel(action)}</button>`,
                    )}</td>`
                  : null
              }
            </tr>`,
          )}</tbody>
        </table>`
        : null
    }
    ${
      dialog
        ? html`<${ActionDialog} action=${dialog.action} alarms=${dialog.alarms} shelveMax=${shelveMax}
            onClose=${() => (setDialog(null), setSelected(new Set()))} />`
        : null
    }`;
}
