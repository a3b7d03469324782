/**
 * The model check at association: the logical devices and logical nodes the device exposes against those
 * the connection's SCL file gives its IED. A difference is not fatal (the operator may be commissioning),
 * but the session says so (`model_mismatch`), naming what differs.
 */
import type { Queryable } from '@scada/platform';
import { browseOf } from '../store/files.ts';

/** Logical devices (MMS domain names) with their logical node names. */
export type ModelNames = { name: string; logicalNodes: string[] }[];

/** What the SCL file says the device holds. */
export type ExpectedModel = { iedName: string; logicalDevices: ModelNames };

/** At most this many differences are named in the detail. */
const shown = 5;

function list(names: string[]): string {
  return names.length > shown ? `${names.slice(0, shown).join(', ')} and ${names.length - shown} more` : names.join(', ');
}

/** The difference between the file's IED and the device, in words; null when they agree. */
export function modelMismatch(expected: ExpectedModel, device: ModelNames): string | null {
  const flat = (m: ModelNames) => new Set(m.flatMap((ld) => [ld.name, ...ld.logicalNodes.map((ln) => `${ld.name}/${ln}`)]));
  const want = flat(expected.logicalDevices);
  const have = flat(device);
  const missing = [...want].filter((n) => !have.has(n));
  const extra = [...have].filter((n) => !want.has(n));
  if (missing.length === 0 && extra.length === 0) return null;
  const parts = [
    ...(missing.length ? [`the device lacks ${list(missing)}`] : []),
    ...(extra.length ? [`the file does not describe ${list(extra)}`] : []),
  ];
  return `The device's model is not IED ${expected.iedName} of the SCL file: ${parts.join('; ')}`;
}

type TreeIed = { name: string; logicalDevices: { name: string; logicalNodes: { name: string }[] }[] };

/**
 * The model of the IED a connection's file describes: the only IED, or, in a file of several, the one
 * whose logical devices the device names (`deviceDomains`); null without a file or a matching IED.
 */
export async function expectedModelOf(
  db: Queryable,
  space: string,
  id: string,
  deviceDomains: () => Promise<string[]>,
): Promise<ExpectedModel | null> {
  const kept = await browseOf(db, space, id, { maxJsonBytes: 16 * 1024 * 1024 });
  if (!kept || !('tree' in kept)) return null;
  const ieds = (kept.tree.ieds as TreeIed[]).filter((i) => i.logicalDevices.length > 0);
  if (ieds.length === 0) return null;
  let ied = ieds[0];
  if (ieds.length > 1) {
    const domains = new Set(await deviceDomains());
    ied = ieds.find((i) => i.logicalDevices.some((ld) => domains.has(ld.name))) ?? ied;
  }
  return {
    iedName: ied.name,
    logicalDevices: ied.logicalDevices.map((ld) => ({ name: ld.name, logicalNodes: ld.logicalNodes.map((ln) => ln.name) })),
  };
}
