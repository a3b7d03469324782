/**
 * What the SCL file says of a connection's data objects and attributes, for the screens that show them:
 * descriptions, units and the names of enumeration values, from `GET …/browse?source=scl` (the file's
 * model, also while the device is connected), looked up by reference (`LD/LN.DO.DA[FC]`).
 */
import { api, ApiError } from './api.ts';

/** What the file says of one attribute or data object. */
export type ObjectInfo = { desc?: string; unit?: string; enumValues?: Map<number, string> };

/** The file's words by reference: attributes as `LD/LN.DO.DA[FC]`, data objects as `LD/LN.DO`, logical nodes as `LD/LN`, logical devices as `LD`. */
export type ModelInfo = Map<string, ObjectInfo>;

type SclAttribute = { name: string; fc: string; type?: string; bType?: string; desc?: string; unit?: string };
type SclDataObject = { name: string; desc?: string; unit?: string; attributes: SclAttribute[] };
type SclTree = {
  enumTypes?: { id: string; values: { ord: number; value: string }[] }[];
  ieds?: {
    logicalDevices: { name: string; desc?: string; logicalNodes: { name: string; desc?: string; dataObjects: SclDataObject[] }[] }[];
  }[];
};

/** The lookup of an SCL browse tree. */
export function modelInfoOf(tree: SclTree): ModelInfo {
  const enums = new Map((tree.enumTypes ?? []).map((e) => [e.id, new Map(e.values.map((v) => [v.ord, v.value]))]));
  const info: ModelInfo = new Map();
  for (const ied of tree.ieds ?? [])
    for (const ld of ied.logicalDevices) {
      if (ld.desc) info.set(ld.name, { desc: ld.desc });
      for (const ln of ld.logicalNodes) {
        if (ln.desc) info.set(`${ld.name}/${ln.name}`, { desc: ln.desc });
        for (const d of ln.dataObjects) {
          const object = `${ld.name}/${ln.name}.${d.name}`;
          if (d.desc || d.unit) info.set(object, { desc: d.desc, unit: d.unit });
          for (const a of d.attributes) {
            const enumValues = a.bType === 'Enum' && a.type ? enums.get(a.type) : undefined;
            if (a.desc || a.unit || enumValues) info.set(`${object}.${a.name}[${a.fc}]`, { desc: a.desc, unit: a.unit, enumValues });
          }
        }
      }
    }
  return info;
}

/** A reference without array indexes, as the file names it: `HA.phsAHar(2).cVal` → `HA.phsAHar.cVal`. */
const plain = (reference: string) => reference.replace(/\(\d+\)/g, '');

/** The file's words for an attribute reference (`LD/LN.DO.DA[FC]`): its own, and its data object's description. */
export function infoOf(info: ModelInfo, reference: string): ObjectInfo & { objectDesc?: string } {
  const ref = plain(reference);
  const own = info.get(ref) ?? {};
  const m = /^([^/]+\/[^.]+\.[^.[]+)/.exec(ref);
  const object = m ? info.get(m[1]) : undefined;
  return { ...own, objectDesc: object?.desc };
}

const loaded = new Map<string, Promise<ModelInfo>>();

/**
 * The lookup of a connection's SCL file, fetched once per connection and page; empty for a connection
 * without a file (not asked: the answer would be a refusal).
 */
export function modelInfo(connectionId: string, hasFile: boolean): Promise<ModelInfo> {
  if (!hasFile) return Promise.resolve(new Map());
  let found = loaded.get(connectionId);
  if (!found) {
    found = api<SclTree>('GET', `/api/connections/${connectionId}/browse`, { query: { source: 'scl' } })
      .then(modelInfoOf)
      .catch((err: unknown) => {
        loaded.delete(connectionId);
        // A file removed meanwhile, or a station file too large for one answer: the screens do without.
        if (err instanceof ApiError && (err.code === 'no_scl_file' || err.status === 413)) return new Map() as ModelInfo;
        throw err;
      });
    loaded.set(connectionId, found);
  }
  return found;
}

/** Forgets what was fetched of a connection (its file changed). */
export function forgetModelInfo(connectionId: string): void {
  loaded.delete(connectionId);
}
