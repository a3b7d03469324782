/**
 * MMS object references of the model: `Domain/LN$FC$DO$DA`, with `$` between every name below the logical
 * node, as an MMS client reads and writes them (e.g. `simpleIOGenericIO/GGIO1$ST$Ind1$stVal`).
 */
import type { Fcda, Ied, LogicalDevice } from './model.ts';

/** The reference of an attribute: `path` is dotted from the data object down (`AnIn1.mag.f`). */
export function mmsReference(domain: string, lnName: string, fc: string, path: string): string {
  return `${domain}/${lnName}$${fc}$${path.replaceAll('.', '$')}`;
}

/** The reference of something a logical node holds directly: a data set, or a control block with its FC. */
export function lnMemberReference(domain: string, lnName: string, name: string, fc?: string): string {
  return fc === undefined ? `${domain}/${lnName}$${name}` : `${domain}/${lnName}$${fc}$${name}`;
}

/** The MMS domain of a logical device of an IED: its own when the IED has it, else IED name + `inst`. */
export function domainOf(ied: Ied, ldInst: string): string {
  for (const ap of ied.accessPoints) {
    const ld: LogicalDevice | undefined = ap.server?.logicalDevices.find((l) => l.inst === ldInst);
    if (ld) return ld.domain;
  }
  return `${ied.name}${ldInst}`;
}

/** The reference of a data set member of an IED. */
export function fcdaReference(ied: Ied, member: Fcda): string {
  const path = member.daName ? `${member.doName}.${member.daName}` : member.doName;
  return mmsReference(domainOf(ied, member.ldInst), `${member.prefix}${member.lnClass}${member.lnInst}`, member.fc, path);
}
