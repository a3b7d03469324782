/**
 * The connection form's choice of report blocks to enable whenever the session starts (`enableReports`):
 * the blocks the stored SCL file declares as check boxes, and any other by its MMS name, one a line.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';

type Tree = {
  ieds?: { logicalDevices: { logicalNodes: { reportControls: { buffered: boolean; instances: { ref: string }[] }[] }[] }[] }[];
};

/** The report block instances an SCL browse tree declares, by MMS name. */
function blocksOf(tree: Tree): string[] {
  return (tree.ieds ?? []).flatMap((ied) =>
    ied.logicalDevices.flatMap((ld) => ld.logicalNodes.flatMap((ln) => ln.reportControls.flatMap((rc) => rc.instances.map((i) => i.ref)))),
  );
}

/** The field: `value` is the list as it will be saved. */
export function ReportBlocksField({
  id,
  hasFile,
  value,
  onChange,
}: {
  id?: string;
  hasFile: boolean;
  value: string[];
  onChange: (next: string[]) => void;
}) {
  const [known, setKnown] = useState<string[]>([]);
  useEffect(() => {
    if (!id || !hasFile) return;
    api<Tree>('GET', `/api/connections/${id}/browse`, { query: { source: 'scl' } })
      .then((tree) => setKnown(blocksOf(tree)))
      .catch(() => setKnown([]));
  }, [id, hasFile]);
  const others = value.filter((rcb) => !known.includes(rcb));
  const toggle = (rcb: string, on: boolean) => onChange(on ? [...value, rcb] : value.filter((r) => r !== rcb));
  const setOthers = (text: string) => {
    const typed = text
      .split(/[\s,]+/)
      .map((s) => s.trim())
      .filter(Boolean);
    onChange([...value.filter((rcb) => known.includes(rcb)), ...typed]);
  };
  return html`<fieldset class="field">
    <legend>Report blocks to enable when the session starts</legend>
    ${known.map(
      (rcb) =>
        html`<label class="check"><input type="checkbox" checked=${value.includes(rcb)} onChange=${(e: Event) => toggle(rcb, (e.target as HTMLInputElement).checked)} /> ${rcb}</label>`,
    )}
    <label for="f-reports">${known.length > 0 ? 'Other blocks' : 'Blocks'} to enable, one MMS reference a line (LD/LLN0$RP$urcbMeas01)</label>
    <textarea id="f-reports" rows="3" aria-describedby="f-reports-hint" value=${others.join('\n')} onChange=${(e: Event) => setOthers((e.target as HTMLTextAreaElement).value)}></textarea>
    <small id="f-reports-hint">Each is enabled with a general interrogation, so its values arrive as soon as the device is connected.</small>
  </fieldset>`;
}
