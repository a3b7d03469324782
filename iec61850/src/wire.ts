/**
 * `@scada/iec61850/wire`: every layer of the MMS stack over ISO transport, one protocol layer a file (TPKT,
 * COTP, session, presentation, ACSE, BER, MMS PDUs, data and types), each with a typed codec error, with
 * the client and the SCL parser of the main entry. For a server of its own (the project's simulator) and
 * for tests that build frames by hand; a client of devices needs only `@scada/iec61850`.
 */
export * from './scl/mod.ts';
export * from './client/mod.ts';
export * from './mms/client.ts';
export * from './mms/client_errors.ts';
export { MMS_TLS_PORT, type TlsOptions } from './mms/tls_transport.ts';
export * from './mms/codec_error.ts';
export * from './mms/tpkt.ts';
export * from './mms/cotp.ts';
export * from './mms/session.ts';
export * from './mms/presentation.ts';
export * from './mms/acse.ts';
export * from './mms/ber.ts';
export * from './mms/ber_fields.ts';
export * from './mms/ber_values.ts';
export * from './mms/frames.ts';
export * from './mms/mms_pdu.ts';
export * from './mms/mms_services.ts';
export * from './mms/mms_data.ts';
export * from './mms/mms_types.ts';
export * from './mms/mms_access.ts';
export * from './mms/mms_files.ts';
export * from './mms/mms_journal.ts';
export * from './mms/alternate_access.ts';
/** Two layers call their encoder `encodeData`: the entry gives MMS data that name, and COTP's data TPDU its own. */
export { encodeData } from './mms/mms_data.ts';
export { encodeData as encodeCotpData } from './mms/cotp.ts';
