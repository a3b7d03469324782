import type { Operation, ServiceName } from './operation.ts';

/**
 * Who may ask for what on the bus, besides answering: what each service's handlers call of the others (a
 * service may always call its own operations, on its own replicas), and the operations only services
 * call, which no gateway routes. The NATS permissions (deploy/nats/permissions.ts) and the services' check
 * of who sent a request (platform/src/bus/trust.ts) both follow from it.
 */
export const serviceCalls: Record<ServiceName, readonly string[]> = {
  auth: [],
  // The project status; and what a script's `ins` calls, as the script (config-service/src/scripts/plant.ts).
  config: [
    'connectionStatusesOfProject',
    'readConnectionValues',
    'getConnectionValues',
    'writeConnectionValue',
    'operateConnectionControl',
    // Alarms: the reference of a definition checked against the connection's model, and the project status.
    'checkAlarmReference',
    'activeAlarmGroupsOfProject',
  ],
  // The alarm evaluator takes up the alarm definitions of a space.
  protocol: ['getProject', 'alarmDefinitionsOfSpace'],
  // Whether a connection is one of the caller's space, before its history is read.
  history: ['getConnection_1'],
};

/** Operations that only services call. */
export const betweenServicesOnly: ReadonlySet<string> = new Set([
  'connectionStatusesOfProject',
  'alarmDefinitionsOfSpace',
  'checkAlarmReference',
  'activeAlarmGroupsOfProject',
  // A site's protocol service and the hub's, between themselves.
  'sitePing',
  'siteConnections',
  'siteConnectionCopy',
  'siteConnectionChunk',
]);

/** Whether a sender playing `role` (a gateway, or a service) may ask for `op`. */
export function mayCall(role: 'gateway' | ServiceName, op: Operation): boolean {
  if (role === 'gateway') return !betweenServicesOnly.has(op.operationId);
  return op.service === role || serviceCalls[role].includes(op.operationId);
}

/**
 * The inbox prefix of a process on NATS, by the role it plays (`platform` for one process of every part):
 * replies reach a process under its own prefix, and NATS lets each role read its own inboxes only, so no
 * service reads the answers meant for a gateway (sign-in answers carry tokens). A protocol service at an
 * edge site (`SITE`) takes its replies under `_INBOX_site.<name>`: the hub's leaf user for that site lets
 * replies down to those inboxes only, so no site hears the answers meant for another.
 */
export function busInboxPrefix(role: 'gateway' | ServiceName | 'platform', site?: string): string {
  return site ? `${siteInboxRoot}.${site}` : `_INBOX_${role}`;
}

/** The first token of every edge site's inboxes (`_INBOX_site.<name>`). */
export const siteInboxRoot = '_INBOX_site';
