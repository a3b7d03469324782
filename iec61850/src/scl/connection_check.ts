/**
 * Whether a connection's address agrees with its SCL file: the IED the connection talks to, the IP the
 * communication section gives that IED's server access point, and its MMS port (102 when the file names
 * none). Disagreements are warnings: a device behind NAT or a port forward is reached at other addresses.
 */
import type { ConnectedAp, Ied, SclModel } from './model.ts';
import { lnMemberReference } from './references.ts';

/** A disagreement between a connection and the SCL file; `code` is stable, `message` says it for people. */
export type ConnectionWarning = {
  code:
    | 'ied_not_in_scl'
    | 'no_server_ied'
    | 'ied_ambiguous'
    | 'no_address'
    | 'ip_unchecked'
    | 'ip_mismatch'
    | 'port_mismatch'
    | 'report_block_not_in_scl';
  message: string;
};

/**
 * What the connection says: where it connects, optionally which IED of the file it means, and the report
 * blocks it enables when started (MMS names, `LD/LLN0$RP$urcb01`).
 */
export type ConnectionTarget = { ip: string; port: number; iedName?: string; reportBlocks?: readonly string[] };

/** The default MMS port (ISO transport over TCP, RFC 1006). */
const MMS_PORT = 102;
const WILDCARDS = new Set(['0.0.0.0', '0:0:0:0:0:0:0:0']);

/** A canonical text for an IPv4 or IPv6 literal, or undefined when `text` is not one (a host name). */
export function canonicalIp(text: string): string | undefined {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text.trim());
  if (v4) {
    const parts = v4.slice(1).map(Number);
    return parts.every((p) => p <= 255) ? parts.join('.') : undefined;
  }
  const v6 = text
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (!/^[0-9a-f:]+$/.test(v6) || !v6.includes(':') || v6.split('::').length > 2) return undefined;
  const [head, tail] = v6.includes('::') ? v6.split('::') : [v6, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0) || [...left, ...right].some((g) => g.length < 1 || g.length > 4))
    return undefined;
  return [...left, ...Array(missing).fill('0'), ...right].map((g) => String(parseInt(g, 16))).join(':');
}

function serves(ied: Ied, apName: string): boolean {
  return ied.accessPoints.some((ap) => ap.name === apName && (ap.server !== undefined || ap.serverAt !== undefined));
}

function serverAddresses(model: SclModel, ied: Ied): ConnectedAp[] {
  return model.subNetworks.flatMap((sn) => sn.connectedAPs.filter((c) => c.iedName === ied.name && serves(ied, c.apName)));
}

function ipOf(cap: ConnectedAp): string | undefined {
  return cap.address.IP ?? cap.address.IPv6;
}

/** Picks the IED the connection means, or says why it cannot. */
function pickIed(model: SclModel, target: ConnectionTarget): Ied | ConnectionWarning {
  if (target.iedName !== undefined) {
    const named = model.ieds.find((i) => i.name === target.iedName);
    return named ?? { code: 'ied_not_in_scl', message: `the SCL file does not describe IED ${target.iedName}` };
  }
  const servers = model.ieds.filter((i) => i.accessPoints.some((ap) => ap.server !== undefined));
  if (servers.length === 0) return { code: 'no_server_ied', message: 'the SCL file describes no IED with a server' };
  if (servers.length === 1) return servers[0];
  const ip = canonicalIp(target.ip);
  const matching = servers.filter((i) => serverAddresses(model, i).some((c) => ip !== undefined && canonicalIp(ipOf(c) ?? '') === ip));
  if (matching.length === 1) return matching[0];
  const names = servers
    .slice(0, 5)
    .map((i) => i.name)
    .join(', ');
  return {
    code: 'ied_ambiguous',
    message: `the SCL file describes ${servers.length} IEDs (${names}${servers.length > 5 ? ', …' : ''}); name the IED of the connection`,
  };
}

/**
 * Compares a connection with the SCL file: returns one warning per disagreement, none when they agree or
 * when the file leaves the address open (`0.0.0.0`, as example and template files do).
 */
export function checkConnection(model: SclModel, target: ConnectionTarget): ConnectionWarning[] {
  const ied = pickIed(model, target);
  if ('code' in ied) return [ied];
  return [...addressWarnings(model, ied, target), ...reportBlockWarnings(ied, target.reportBlocks ?? [])];
}

/** The report blocks the connection lists that the IED does not declare (a typing slip, or another file's names). */
function reportBlockWarnings(ied: Ied, blocks: readonly string[]): ConnectionWarning[] {
  if (blocks.length === 0) return [];
  const declared = new Set<string>();
  for (const ap of ied.accessPoints)
    for (const ld of ap.server?.logicalDevices ?? [])
      for (const ln of ld.logicalNodes)
        for (const rc of ln.reportControls)
          for (const name of rc.instances) declared.add(lnMemberReference(ld.domain, ln.name, name, rc.buffered ? 'BR' : 'RP'));
  return blocks
    .filter((rcb) => !declared.has(rcb))
    .map((rcb) => ({
      code: 'report_block_not_in_scl' as const,
      message: `the connection enables report block ${rcb} at start; the SCL file declares no such block for IED ${ied.name}`,
    }));
}

/** The address and port of the connection against those the file gives the IED's server. */
function addressWarnings(model: SclModel, ied: Ied, target: ConnectionTarget): ConnectionWarning[] {
  const caps = serverAddresses(model, ied).filter((c) => ipOf(c) !== undefined);
  if (caps.length === 0) return [{ code: 'no_address', message: `the SCL file gives no IP address for IED ${ied.name}` }];
  const warnings: ConnectionWarning[] = [];
  const ip = canonicalIp(target.ip);
  const listed = caps.map((c) => ipOf(c)!);
  let cap = caps[0];
  if (ip === undefined) {
    warnings.push({
      code: 'ip_unchecked',
      message: `the connection names host ${target.ip}; the SCL file gives IED ${ied.name} ${listed.join(', ')}`,
    });
  } else {
    const same = caps.find((c) => canonicalIp(ipOf(c)!) === ip);
    const open = caps.find((c) => WILDCARDS.has(canonicalIp(ipOf(c)!) ?? ''));
    cap = same ?? open ?? cap;
    if (!same && !open) {
      warnings.push({
        code: 'ip_mismatch',
        message: `the connection uses ${target.ip}; the SCL file gives IED ${ied.name} ${listed.join(', ')}`,
      });
    }
  }
  const declared = cap.address['MMS-Port'];
  const port = declared !== undefined && /^\d{1,5}$/.test(declared) ? Number(declared) : MMS_PORT;
  if (port !== target.port) {
    const source =
      declared === undefined ? `names no MMS port for IED ${ied.name} (${MMS_PORT} by default)` : `gives IED ${ied.name} MMS port ${port}`;
    warnings.push({ code: 'port_mismatch', message: `the connection uses port ${target.port}; the SCL file ${source}` });
  }
  return warnings;
}
