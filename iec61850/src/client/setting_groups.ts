/**
 * Setting groups (IEC 61850-7-2 §8) as IEC 61850-8-1 maps them: the setting group control block is the
 * structure `LLN0$SP$SGCB` of a logical device (NumOfSG, ActSG, EditSG, CnfEdit, LActTm, ResvTms when the
 * device has it), and each of its services is a write of one of its attributes: SelectActiveSG writes
 * ActSG, SelectEditSG writes EditSG (0 ends the selection), ConfirmEditSGValues writes CnfEdit true.
 * SetEditSGValue writes the settings under SE, GetEditSGValue reads them; the active group's values are
 * the settings under SG. These functions are stateless: a device answers for its own block (who may edit,
 * which values it takes), and the caller decides who may ask.
 */
import type { MmsRequester } from '../mms/client.ts';
import type { MmsData } from '../mms/mms_data.ts';
import type { MmsType } from '../mms/mms_types.ts';
import { Iec61850Error } from './errors.ts';
import { leafName, parseReference, toObjectName, toObjectReference, type DataReference } from './reference.ts';
import { fromJson } from './values.ts';
import { timestampOf } from './values_bits.ts';

/** What the functions need of a device: its MMS client and the types of its variables. */
export type SettingGroupContext = { client: MmsRequester; typeOf(ref: string): Promise<MmsType> };

/** A setting group control block as the device answered it. */
export type SettingGroupControl = {
  /** The logical device (MMS domain). */
  ld: string;
  /** `LD/LLN0.SGCB`. */
  reference: string;
  numberOfGroups: number;
  activeGroup: number;
  /** The group selected for edit; 0 when none is. */
  editGroup: number;
  /** When the active group was last selected (LActTm); null when never (the device's zero time). */
  lastActivated: string | null;
  /** ResvTms: the seconds left of the selection for edit, when the device has it. */
  reservationSeconds?: number;
};

/** The attributes of the block a client writes (IEC 61850-8-1 §19). */
export type SgcbAttribute = 'ActSG' | 'EditSG' | 'CnfEdit';

/** The MMS reference of a logical device's block, or of one of its attributes. */
export function sgcbMmsReference(ld: string, attribute?: SgcbAttribute): string {
  return `${ld}/LLN0$SP$SGCB${attribute === undefined ? '' : `$${attribute}`}`;
}

function integer(d: MmsData | undefined): number | undefined {
  return d?.type === 'unsigned' || d?.type === 'integer' ? Number(d.value) : undefined;
}

/**
 * Reads the block of a logical device from its MMS value, by the component order of IEC 61850-8-1
 * (NumOfSG, ActSG, EditSG, CnfEdit, LActTm, ResvTms); a value of another shape is `bad_value`.
 */
export function decodeSgcb(ld: string, data: MmsData): SettingGroupControl {
  const [numOfSG, actSG, editSG, , lActTm, resvTms] = data.type === 'structure' ? data.value : [];
  const numberOfGroups = integer(numOfSG);
  const activeGroup = integer(actSG);
  const editGroup = integer(editSG);
  if (numberOfGroups === undefined || activeGroup === undefined || editGroup === undefined)
    throw new Iec61850Error('bad_value', `${sgcbMmsReference(ld)} is not a setting group control block (NumOfSG, ActSG, EditSG, …)`);
  const time = lActTm?.type === 'utc-time' ? timestampOf(lActTm.value).time : null;
  const control: SettingGroupControl = {
    ld,
    reference: `${ld}/LLN0.SGCB`,
    numberOfGroups,
    activeGroup,
    editGroup,
    lastActivated: time === null || Date.parse(time) === 0 ? null : time,
  };
  const reservation = integer(resvTms);
  if (reservation !== undefined) control.reservationSeconds = reservation;
  return control;
}

/**
 * The blocks of the logical devices named (every logical device of the device when none are), in one
 * read: a logical device whose read fails has none, and the DataAccessError of the read instead
 * (object-non-existent, 10, where it has no block).
 */
export async function readSettingGroupControls(
  device: SettingGroupContext,
  lds?: string[],
): Promise<{ ld: string; control?: SettingGroupControl; error?: number }[]> {
  const names = lds ?? (await device.client.getAllNames({ objectClass: 'domain' }));
  if (names.length === 0) return [];
  const results = await device.client.read(names.map((ld) => sgcbMmsReference(ld)));
  return names.map((ld, i) => {
    const r = results[i];
    if (r?.ok) return { ld, control: decodeSgcb(ld, r.data) };
    return { ld, error: r?.error ?? 10 };
  });
}

/** Writes one attribute of a logical device's block: a group number (ActSG, EditSG) or CnfEdit true. */
export function writeSgcb(device: SettingGroupContext, ld: string, attribute: SgcbAttribute, group = 0): Promise<void> {
  const data: MmsData = attribute === 'CnfEdit' ? { type: 'boolean', value: true } : { type: 'unsigned', value: group };
  return device.client.write(sgcbMmsReference(ld, attribute), data);
}

/** The leaves of a setting's type, as paths below it (a structure's components; an array is one setting). */
function leafPaths(type: MmsType, path: string[] = [], out: string[][] = []): string[][] {
  if (type.type !== 'structure') out.push(path);
  else for (const c of type.components) if (c.name !== undefined) leafPaths(c.type, [...path, c.name], out);
  return out;
}

/**
 * The settings of a logical device: the attributes under SG or SE of its logical nodes, as references
 * without a functional constraint (`LD/PTOC1.StrVal.setMag.f`), in the device's order. One GetNameList
 * of the logical device and the type of each logical node (cached by the device).
 */
export async function settingReferences(device: SettingGroupContext, ld: string): Promise<string[]> {
  const variables = await device.client.getAllNames({ objectClass: 'namedVariable', domain: ld });
  const out = new Set<string>();
  for (const ln of variables.filter((v) => !v.includes('$'))) {
    const type = await device.typeOf(`${ld}/${ln}`);
    if (type.type !== 'structure') continue;
    for (const fc of type.components) {
      if ((fc.name !== 'SG' && fc.name !== 'SE') || fc.type.type !== 'structure') continue;
      for (const path of leafPaths(fc.type)) out.add(`${ld}/${[ln, ...path].join('.')}`);
    }
  }
  return [...out];
}

/**
 * A setting's reference under SE: `LD/LN.DO.DA` gets `[SE]`, `…[SE]` or `LD/LN$SE$DO$DA` stay; another
 * functional constraint, or a reference outside `ld`, is `bad_reference`.
 */
export function editReference(text: string, ld: string): DataReference {
  const bare = typeof text === 'string' && !text.includes('[') && !text.includes('$');
  const r = parseReference(bare ? `${text.trim()}[SE]` : text);
  if (r.fc !== undefined && r.fc !== 'SE')
    throw new Iec61850Error('bad_reference', `${text} is ${r.fc}: a setting group's values are edited under SE`);
  if (r.ld !== ld) throw new Iec61850Error('bad_reference', `${text} is not in logical device ${ld}, whose setting group is edited`);
  if (r.path.length === 0) throw new Iec61850Error('bad_reference', `${text} names a logical node, not a setting`);
  return { ...r, fc: 'SE' };
}

/** One value of SetEditSGValue and how the device took it. */
export type EditValueResult = { reference: string } & ({ ok: true } | { ok: false; error: number; errorText: string });

/**
 * SetEditSGValue: writes values of settings under SE in one request, each converted to its type first (a
 * value that does not fit is `bad_value` before anything is sent); answers how the device took each.
 */
export async function setEditValues(
  device: SettingGroupContext,
  ld: string,
  values: { reference: string; value: unknown }[],
): Promise<EditValueResult[]> {
  const refs = values.map((v) => editReference(v.reference, ld));
  const items = await Promise.all(
    refs.map(async (r, i) => {
      const reference = toObjectReference(r);
      const type = await device.typeOf(reference);
      return { ref: toObjectName(r), data: fromJson(values[i].value, type, leafName(r), reference) };
    }),
  );
  const results = await device.client.writeMany(items);
  return results.map((r, i) => {
    const reference = toObjectReference(refs[i]);
    return r.ok ? { reference, ok: true } : { reference, ok: false, error: r.error, errorText: r.errorText };
  });
}
