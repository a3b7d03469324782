/** Changing the plant: a write that asks for confirmation, and the control panel for the four control models. */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, messageOf } from '../api.ts';
import { Alert, Modal } from './common.ts';

/** Turns the typed text into the value to send: a boolean, a number, or the text itself. */
function parseValue(kind: string, text: string): unknown {
  if (kind === 'boolean') return text === 'true';
  if (kind === 'number') return Number(text);
  return text;
}

/** Writes one attribute after the person confirmed what and where. */
export function WriteDialog({
  id,
  reference,
  kind: given,
  onClose,
}: {
  id: string;
  reference: string;
  kind?: string;
  onClose: () => void;
}) {
  // The type the model gives the attribute, when known; the person may still choose another.
  const [kind, setKind] = useState(given ?? 'number');
  const [text, setText] = useState('');
  const [stage, setStage] = useState<'edit' | 'confirm' | 'busy' | 'done'>('edit');
  const [error, setError] = useState<string | null>(null);
  const value = parseValue(kind, text);
  const invalid = kind === 'number' && (text.trim() === '' || Number.isNaN(value));
  const write = async () => {
    setStage('busy');
    setError(null);
    try {
      await api('POST', `/api/connections/${id}/write`, { body: { reference, value } });
      setStage('done');
    } catch (err) {
      setError(messageOf(err));
      setStage('edit');
    }
  };
  return html`<${Modal} title=${`Write ${reference}`} onClose=${onClose}>
    ${
      stage === 'edit'
        ? html`<form method="dialog" onSubmit=${(e: Event) => (e.preventDefault(), setStage('confirm'))}>
          <div class="field">
            <label for="w-kind">Type</label>
            <select id="w-kind" value=${kind} onChange=${(e: Event) => setKind((e.target as HTMLSelectElement).value)}>
              <option value="number">Number</option><option value="boolean">Boolean</option><option value="text">Text</option>
            </select>
          </div>
          ${
            kind === 'boolean'
              ? html`<div class="field"><label for="w-value">Value</label>
                <select id="w-value" value=${text || 'false'} onChange=${(e: Event) => setText((e.target as HTMLSelectElement).value)}>
                  <option value="false">false</option><option value="true">true</option>
                </select></div>`
              : html`<div class="field"><label for="w-value">Value</label>
                <input id="w-value" value=${text} onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} /></div>`
          }
          <${Alert} message=${error} />
          <button type="submit" disabled=${invalid}>Write…</button>
          <button type="button" class="secondary" onClick=${onClose}>Cancel</button>
        </form>`
        : null
    }
    ${
      stage === 'confirm' || stage === 'busy'
        ? html`<p>Write <strong>${JSON.stringify(value)}</strong> to <strong>${reference}</strong> on the device?</p>
          <button type="button" disabled=${stage === 'busy'} onClick=${write}>${stage === 'busy' ? 'Writing…' : 'Yes, write it'}</button>
          <button type="button" class="secondary" disabled=${stage === 'busy'} onClick=${() => setStage('edit')}>No, go back</button>`
        : null
    }
    ${
      stage === 'done'
        ? html`<p role="status" class="alert info">The device took the value.</p><button type="button" onClick=${onClose}>Close</button>`
        : null
    }
  <//>`;
}

/** The control models by their number and name (IEC 61850-7-2), with the steps each walks. */
const models: Record<string, { name: string; steps: string[] }> = {
  '0': { name: 'status only', steps: [] },
  '1': { name: 'direct with normal security', steps: ['Operate'] },
  '2': { name: 'select before operate with normal security', steps: ['Select', 'Operate'] },
  '3': { name: 'direct with enhanced security', steps: ['Operate', 'Termination'] },
  '4': { name: 'select before operate with enhanced security', steps: ['Select', 'Operate', 'Termination'] },
};
const modelByName: Record<string, string> = {
  'status-only': '0',
  'direct-with-normal-security': '1',
  'sbo-with-normal-security': '2',
  'direct-with-enhanced-security': '3',
  'sbo-with-enhanced-security': '4',
};

/** Which step a refusal came from: the device's service names it, a negative CommandTermination its error. */
function failedStep(err: unknown, steps: string[]): number {
  const e = err instanceof ApiError ? (err.problem.deviceError as { service?: string; error?: string } | undefined) : undefined;
  if (/select/i.test(e?.service ?? '')) return steps.indexOf('Select');
  if (/termination/i.test(`${e?.service} ${e?.error}`)) return steps.indexOf('Termination');
  return Math.max(0, steps.indexOf('Operate'));
}

/**
 * Operates a control object: reads its control model, then shows the steps the platform walks for it
 * (select, operate, termination) and how each ended. While another operation on the object is pending,
 * the platform answers `control_in_progress` and the button stays disabled until it may be tried again.
 */
export function ControlDialog({ id, reference, cdc, onClose }: { id: string; reference: string; cdc: string; onClose: () => void }) {
  // The device's own model does not name the class: the person says what the command is.
  const [kind, setKind] = useState(cdc === 'SPC' || cdc === 'DPC' || cdc === '' ? 'boolean' : 'number');
  const binary = kind === 'boolean';
  const [model, setModel] = useState<string | null>(null);
  const [value, setValue] = useState(binary ? 'true' : '0');
  const [phase, setPhase] = useState<'ready' | 'busy' | 'ok' | 'failed' | 'in-progress'>('ready');
  const [failedAt, setFailedAt] = useState(-1);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<{ value?: unknown }[]>('POST', `/api/connections/${id}/read`, { body: { references: [`${reference}.ctlModel[CF]`] } })
      .then(([r]) => {
        const v = r?.value;
        setModel(typeof v === 'string' ? (modelByName[v] ?? v) : v === undefined ? null : String(v));
      })
      .catch(() => setModel(null));
  }, [id, reference]);
  const steps = models[model ?? '']?.steps ?? ['Select (if the model asks)', 'Operate', 'Termination (if the model asks)'];
  const operate = async () => {
    setPhase('busy');
    setError(null);
    setFailedAt(-1);
    try {
      await api('POST', `/api/connections/${id}/control`, { body: { reference, value: binary ? value === 'true' : Number(value) } });
      setPhase('ok');
    } catch (err) {
      setError(messageOf(err));
      if (err instanceof ApiError && err.code === 'control_in_progress') {
        setPhase('in-progress');
        setTimeout(() => setPhase((p) => (p === 'in-progress' ? 'ready' : p)), 3000);
      } else {
        setFailedAt(failedStep(err, steps));
        setPhase('failed');
      }
    }
  };
  const stepState = (i: number) =>
    phase === 'busy'
      ? 'running'
      : phase === 'ok'
        ? 'done'
        : phase === 'failed'
          ? i < failedAt
            ? 'done'
            : i === failedAt
              ? 'failed'
              : 'skipped'
          : 'waiting';
  return html`<${Modal} title=${`Operate ${reference}`} onClose=${onClose}>
    <p>Control model: <strong>${model === null ? 'unknown (the device was not asked)' : (models[model]?.name ?? model)}</strong></p>
    ${model === '0' ? html`<p class="alert warn">This object is status only; it cannot be operated.</p>` : null}
    ${
      cdc === ''
        ? html`<div class="field"><label for="c-kind">Command type</label>
          <select id="c-kind" value=${kind} onChange=${(e: Event) => {
            const next = (e.target as HTMLSelectElement).value;
            setKind(next);
            setValue(next === 'boolean' ? 'true' : '0');
          }}>
            <option value="boolean">On/off (SPC, DPC)</option><option value="number">Number (INC, APC)</option>
          </select></div>`
        : null
    }
    <div class="field">
      <label for="c-value">Command</label>
      ${
        binary
          ? html`<select id="c-value" value=${value} onChange=${(e: Event) => setValue((e.target as HTMLSelectElement).value)}>
            <option value="true">On (true)</option><option value="false">Off (false)</option>
          </select>`
          : html`<input id="c-value" type="number" value=${value} onInput=${(e: Event) => setValue((e.target as HTMLInputElement).value)} />`
      }
    </div>
    <ol class="steps" aria-label="Steps of the control">
      ${steps.map((s, i) => html`<li class=${`step ${stepState(i)}`}>${s}: ${stepState(i)}</li>`)}
    </ol>
    <${Alert} message=${error} />
    ${phase === 'ok' ? html`<p role="status" class="alert info">The device carried the command out.</p>` : null}
    <button type="button" disabled=${phase === 'busy' || phase === 'in-progress' || model === '0'} onClick=${operate}>
      ${phase === 'busy' ? 'Operating…' : phase === 'in-progress' ? 'Another operation is running…' : 'Operate'}
    </button>
    <button type="button" class="secondary" onClick=${onClose}>Close</button>
  <//>`;
}
