/**
 * `@scada/iec61850`: the platform's IEC 61850 stack, with no service state of its own. What a client of
 * devices uses:
 *
 * - the IEC 61850 client (`client/`): a device over an MMS association, references in both notations,
 *   values as JSON, controls, reports, files, journals and setting groups, over the MMS client (`mms/`);
 * - the SCL parser (`scl/`, IEC 61850-6): a streaming parse into the device model and a report, the
 *   browse tree, checks of a connection's address against the file — in the package's own types
 *   (`scl/browse_types.ts`), which a service maps onto its API.
 *
 * The protocol layers one by one are the `@scada/iec61850/wire` entry. Its dependencies: `node:net`,
 * `node:tls` and saxes (XML, without DTDs or entities).
 */
export * from './scl/mod.ts';
export * from './client/mod.ts';
export * from './mms/client.ts';
export * from './mms/client_errors.ts';
export { MMS_TLS_PORT, type TlsOptions } from './mms/tls_transport.ts';
export { dataToPlain, type MmsData } from './mms/mms_data.ts';
export type { MmsType } from './mms/mms_types.ts';
export { dataAccessErrorText, type AccessResult } from './mms/mms_access.ts';
export type { AlternateAccess } from './mms/alternate_access.ts';
export { utcTimeFromMs, utcTimeToMs } from './mms/ber_values.ts';
