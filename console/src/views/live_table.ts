/**
 * A connection's live values as an operator reads them: one row per attribute with its own quality and
 * device time (a data object's `q` and `t` are not rows of their own), numbers rounded with the full value
 * on hover, units and descriptions from the SCL file, enumerations by name; each row redrawn alone when
 * its value changes.
 */
import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { rowOf, valueKeys } from '../live.ts';
import { infoOf, modelInfo, type ModelInfo } from '../model_info.ts';
import { show, when } from './common.ts';
import { plottableLeaves, trendHref } from '../trend_link.ts';
import { at, isQuality, isTime, layout, qualityText, shortNumber, type LiveRow, type Source } from './live_rows.ts';

/** The connection's reported values, live (reported values are status and measurements: writes start from the model). */
export function ValuesTable({ id, hasFile }: { id: string; hasFile: boolean }) {
  const keys = valueKeys.value[id] ?? [];
  const [info, setInfo] = useState<ModelInfo>(new Map());
  useEffect(() => {
    let current = true;
    modelInfo(id, hasFile)
      .then((found) => current && setInfo(found))
      .catch(() => undefined);
    return () => {
      current = false;
    };
  }, [id, hasFile]);
  if (keys.length === 0)
    return html`<p role="status">No values reported yet. Enable a report block in the model (or list it in the connection's settings) to see values arrive.</p>`;
  // The layout follows the keys (a new reference); each row reads its own values, so a change redraws one row.
  // Descriptions have a column when the SCL file describes any data object or attribute.
  const described = [...info].some(([reference, i]) => reference.includes('.') && i.desc);
  const rows = layout(keys.map((key) => ({ key, reference: rowOf(key).peek().reference, value: rowOf(key).peek().value })));
  return html`<table class="values">
    <caption class="sr-only">Live values</caption>
    <thead><tr><th scope="col">Reference</th>${described ? html`<th scope="col">Description</th>` : null}<th scope="col">Value</th><th scope="col">Quality</th><th scope="col">Device time</th><th scope="col">Received</th></tr></thead>
    <tbody>${rows.map((r) => html`<${ValueRow} key=${r.reference} row=${r} info=${info} described=${described} />`)}</tbody>
  </table>`;
}

/** The part of a live value a source names, and the live value itself. */
function read(source: Source) {
  const live = rowOf(source.key).value;
  return { live, value: at(live.value, source.path) };
}

/** A value in words: a number rounded with its unit, an enumeration by its name, a time on the clock. */
function shown(value: unknown, unit: string | undefined, names: Map<number, string> | undefined): string {
  if (typeof value === 'number') {
    const name = Number.isInteger(value) ? names?.get(value) : undefined;
    if (name !== undefined) return `${name} (${value})`;
    return unit ? `${shortNumber(value)} ${unit}` : shortNumber(value);
  }
  if (isTime(value)) return when(value.time);
  if (isQuality(value)) return qualityText(value);
  return show(value);
}

/** A device's time stamp; a time of 0 (1970-01-01, a value the device never stamped) is no time. */
function deviceTime(iso: string | null | undefined): string {
  return iso && Date.parse(iso) === 0 ? '—' : when(iso);
}

/** One attribute: flashes when it changes, greyed while stale. */
function ValueRow({ row, info, described }: { row: LiveRow; info: ModelInfo; described: boolean }) {
  const { live, value } = read(row.value);
  const own = row.value.path.length === 0;
  const q = row.quality ? read(row.quality) : null;
  const t = row.time ? read(row.time) : null;
  // The platform gives a value its data object's `q` and `t` when the same report carries them; a report
  // of a changed magnitude alone does not, and the `q` reported beside it last says then (the newer wins).
  const qv = q && isQuality(q.value) ? q.value : undefined;
  const newer = q !== null && (q.live.receivedAt ?? '') >= (live.receivedAt ?? '');
  const quality = own ? ((newer ? qv : undefined) ?? live.quality ?? qv) : (qv ?? live.quality);
  const tv = t?.value;
  const siblingTime = isTime(tv) ? tv.time : undefined;
  const time = own ? (live.timestamp ?? siblingTime) : (siblingTime ?? live.timestamp);
  const stale = live.stale;
  const words = infoOf(info, row.reference);
  const flash = live.changes === 0 ? '' : live.changes % 2 ? 'flash-a' : 'flash-b';
  const text = shown(value, words.unit, words.enumValues);
  const full = typeof value === 'number' ? String(value) : show(value);
  return html`<tr class=${stale ? 'stale' : ''} data-reference=${row.reference}>
    <th scope="row">${row.reference} <${TrendLink} connectionId=${live.connectionId} reference=${row.reference} value=${value} /></th>
    ${described ? html`<td class="desc">${words.desc ?? words.objectDesc ?? ''}</td>` : null}
    <td class=${`value ${flash}`} data-changes=${live.changes} title=${full}>${text}${stale ? html` <span class="badge">stale</span>` : null}</td>
    <td class="quality">${qualityText(quality)}</td>
    <td class="time" title=${time ?? ''}>${deviceTime(time)}</td>
    <td class="time" title=${live.receivedAt ?? ''}>${when(live.receivedAt)}</td>
  </tr>`;
}

/** A link to the trend of an attribute that holds a number or an on/off state. */
function TrendLink({ connectionId, reference, value }: { connectionId: string; reference: string; value: unknown }) {
  const refs = plottableLeaves(reference, value).slice(0, 1);
  if (refs.length === 0) return null;
  const series = refs.map((r) => ({ connectionId, reference: r }));
  return html`<a class="trend-link" href=${trendHref({ series })} aria-label=${`Trend of ${reference}`}>Trend</a>`;
}
