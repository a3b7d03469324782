/**
 * Which reported value an alarm watches: its reference names a data attribute (`LD/GGIO1.AnIn1.mag.f[MX]`)
 * that a report may carry whole or as part of its data object (`LD/GGIO1.AnIn1[MX]`, whose value is
 * `{mag: {f}, q, t}`): the part is taken from it.
 */
import { parseReference, type DataReference } from '@scada/iec61850';

const parsed = new Map<string, DataReference | null>();

/** A reference parsed once (either notation); null when it does not parse. */
export function referenceOf(text: string): DataReference | null {
  let r = parsed.get(text);
  if (r === undefined) {
    try {
      r = parseReference(text);
    } catch {
      r = null;
    }
    if (parsed.size > 100_000) parsed.clear();
    parsed.set(text, r);
  }
  return r;
}

/** The watched part of a reported value, or undefined when the value (`reported`) does not carry it. */
export function watchedPart(watched: DataReference, reported: DataReference, value: unknown): unknown {
  if (watched.ld !== reported.ld || watched.ln !== reported.ln) return undefined;
  if (watched.fc !== undefined && reported.fc !== undefined && watched.fc !== reported.fc) return undefined;
  if (reported.path.length > watched.path.length) return undefined;
  for (let i = 0; i < reported.path.length; i++) if (watched.path[i] !== reported.path[i]) return undefined;
  let v: unknown = value;
  for (const element of watched.path.slice(reported.path.length)) {
    const [, name, index] = /^([^(]+)(?:\((\d+)\))?$/.exec(element) ?? [];
    if (name === undefined || v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[name];
    if (index !== undefined) v = Array.isArray(v) ? v[Number(index)] : undefined;
  }
  return v;
}
