import ipaddr from 'ipaddr.js';
import type { ProblemFieldError } from '../problems.ts';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** One parsed entry of an IP list: a single address is a CIDR of full length. */
export type IpRule = { text: string; range: [Address, number] };

/** Both lists of the IP filter, parsed. An empty allow-list means no allow-list. */
export type IpFilter = { allowed: IpRule[]; denied: IpRule[] };

/**
 * Parses a comma or space separated list of IPv4/IPv6 addresses and CIDRs. Only canonical dotted quads
 * are IPv4 (`0177.0.0.1` and `127.1` are refused, as are host names, zone ids and out-of-range
 * prefixes); IPv4-mapped IPv6 entries are folded to IPv4.
 */
export function parseIpList(text: string, field: string): { rules: IpRule[]; errors: ProblemFieldError[] } {
  const rules: IpRule[] = [];
  const errors: ProblemFieldError[] = [];
  for (const entry of text.split(/[\s,]+/).filter(Boolean)) {
    const range = parseEntry(entry);
    if (range) rules.push({ text: entry, range });
    else errors.push({ path: `/body/${field}`, message: `"${entry.slice(0, 80)}" is not an IP address or CIDR` });
  }
  return { rules, errors };
}

function parseEntry(entry: string): [Address, number] | null {
  const slash = entry.indexOf('/');
  const host = slash === -1 ? entry : entry.slice(0, slash);
  const prefixText = slash === -1 ? null : entry.slice(slash + 1);
  const address = parseAddress(host);
  if (!address) return null;
  const max = address.kind() === 'ipv4' ? 32 : 128;
  if (prefixText === null) return [address, max];
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  let prefix = Number(prefixText);
  // A mapped IPv6 range folded to IPv4 keeps its length within the IPv4 part.
  if (address.kind() === 'ipv4' && host.includes(':')) prefix -= 96;
  return prefix >= 0 && prefix <= max ? [address, prefix] : null;
}

/** Parses one address strictly; IPv4-mapped IPv6 folds to IPv4. Null when it is not an address. */
export function parseAddress(text: string): Address | null {
  if (text.includes('%')) return null;
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (!text.includes(':') || !ipaddr.IPv6.isValid(text)) return null;
  const v6 = ipaddr.IPv6.parse(text);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

/** The canonical text of an address as the platform logs and compares it: mapped IPv6 folded to IPv4. */
export function foldAddress(text: string): string {
  const address = parseAddress(text);
  return address ? address.toString() : text;
}

/** Parses both lists; errors name each bad entry. */
export function parseIpFilter(settings: { allowedIps?: string; deniedIps?: string }): { filter: IpFilter; errors: ProblemFieldError[] } {
  const allowed = parseIpList(settings.allowedIps ?? '', 'allowedIps');
  const denied = parseIpList(settings.deniedIps ?? '', 'deniedIps');
  return { filter: { allowed: allowed.rules, denied: denied.rules }, errors: [...allowed.errors, ...denied.errors] };
}

function inList(address: Address, rules: IpRule[]): boolean {
  return rules.some(({ range: [base, prefix] }) => base.kind() === address.kind() && address.match(base as never, prefix));
}

/** True when the filter lets the address through: not denied, and inside a non-empty allow-list. */
export function ipAllowed(filter: IpFilter, addressText: string): boolean {
  const address = parseAddress(addressText);
  if (!address) return false;
  if (inList(address, filter.denied)) return false;
  return filter.allowed.length === 0 || inList(address, filter.allowed);
}
