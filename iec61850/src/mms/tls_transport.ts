/**
 * The transport under the ISO stack: plain TCP, or TLS as IEC 62351-3 profiles it for MMS (TLS 1.2 or 1.3,
 * the device's certificate checked against the CA of the connection only, a client certificate when the
 * device asks for one). IEC 62351-3 lets the certificate be pinned by its CA instead of checked against a
 * host name (devices are reached by address and their certificates name the IED): without `serverName`
 * the name is not checked; with it, the certificate must carry that name (subjectAltName, RFC 6125) and
 * it is sent as SNI. What a failed handshake means is said in words ({@link tlsFailure}).
 */
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { checkServerIdentity, connect as tlsConnect } from 'node:tls';

/** The IEC 62351-3 port of MMS over TLS. */
export const MMS_TLS_PORT = 3782;

/** TLS settings of an association, PEM text throughout. */
export type TlsOptions = {
  /** The CA certificate(s) the device's certificate must chain to; the system's roots are not used. */
  ca: string;
  /** The client certificate (with its chain) and its private key, for devices that ask for one. */
  cert?: string;
  key?: string;
  /** The name the device's certificate must carry; without it, the CA alone vouches for the device. */
  serverName?: string;
};

/** A socket being opened, and the event after which the ISO connect may start on it. */
export type Transport = { socket: Socket; ready: 'connect' | 'secureConnect' };

/** Opens TCP, or TLS when `tls` is given. */
export function openTransport(host: string, port: number, tls?: TlsOptions): Transport {
  if (!tls) return { socket: tcpConnect({ host, port }), ready: 'connect' };
  const serverName = tls.serverName;
  const socket = tlsConnect({
    host,
    port,
    ca: tls.ca,
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key }),
    minVersion: 'TLSv1.2',
    maxVersion: 'TLSv1.3',
    rejectUnauthorized: true,
    ...(serverName !== undefined ? { servername: serverName } : isIP(host) === 0 ? { servername: host } : {}),
    checkServerIdentity: (_host, cert) => (serverName === undefined ? undefined : checkServerIdentity(serverName, cert)),
  });
  return { socket, ready: 'secureConnect' };
}

const notSignedByCa = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
]);
const clientCertRefused = new Set([
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN',
  'ERR_SSL_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED',
  'ERR_SSL_TLSV1_ALERT_ACCESS_DENIED',
  'ERR_SSL_TLSV1_ALERT_DECRYPT_ERROR',
]);
const noCommonVersion = new Set([
  'ERR_SSL_UNSUPPORTED_PROTOCOL',
  'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
  'ERR_SSL_NO_PROTOCOLS_AVAILABLE',
  'ERR_SSL_WRONG_SSL_VERSION',
]);
const notTls = new Set([
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_PACKET_LENGTH_TOO_LONG',
  'ERR_SSL_HTTP_REQUEST',
  'ERR_SSL_RECORD_LAYER_FAILURE',
]);

/**
 * What a TLS failure means for the operator, `TLS: …`; undefined for an error that is no TLS failure.
 * `phase`: `handshake` until the handshake has finished (a reset then is the device refusing it), `after`
 * until the device's first ISO answer (with TLS 1.3 a device checks the client's certificate after the
 * client has finished its handshake: a connection closed then is the device refusing it), `later` after
 * that (only TLS alerts are TLS failures then). `err` is the socket's error, or undefined for a connection
 * closed without one.
 */
export function tlsFailure(err: unknown, tls: TlsOptions, phase: 'handshake' | 'after' | 'later'): string | undefined {
  const e = err as (NodeJS.ErrnoException & { reason?: string }) | undefined;
  const code = e?.code ?? '';
  if (phase === 'after' && (e === undefined || code === 'ECONNRESET' || code === 'EPIPE'))
    return tls.cert
      ? "TLS: the device closed the connection right after the handshake: it does not accept the platform's client certificate"
      : 'TLS: the device closed the connection right after the handshake: it may require a client certificate, and the connection has none';
  if (e === undefined) return undefined;
  if (notSignedByCa.has(code)) return "TLS: the device's certificate is not signed by the configured CA";
  if (code === 'CERT_HAS_EXPIRED') return "TLS: the device's certificate has expired";
  if (code === 'CERT_NOT_YET_VALID') return "TLS: the device's certificate is not valid yet";
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `TLS: the device's certificate is not for ${tls.serverName ?? 'this name'} (${e.reason ?? e.message})`;
  if (code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED' || (code === 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE' && !tls.cert))
    return tls.cert
      ? "TLS: the device refused the platform's client certificate"
      : 'TLS: the device requires a client certificate and the connection has none';
  if (clientCertRefused.has(code))
    return `TLS: the device refused the platform's client certificate (${code
      .replace(/^ERR_SSL_(SSLV3|TLSV1)_ALERT_/, '')
      .toLowerCase()
      .replace(/_/g, ' ')})`;
  if (noCommonVersion.has(code)) return 'TLS: the device offers neither TLS 1.2 nor TLS 1.3';
  if (notTls.has(code))
    return `TLS: the device does not answer TLS on this port (MMS without TLS listens on 102, with TLS on ${MMS_TLS_PORT})`;
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) return `TLS: the handshake failed (${e.message})`;
  if (phase === 'handshake' && (code === 'ECONNRESET' || code === 'EPIPE'))
    return tls.cert
      ? "TLS: the device closed the connection during the handshake: it does not speak TLS on this port, or refuses the platform's client certificate"
      : 'TLS: the device closed the connection during the handshake: it does not speak TLS on this port, or requires a client certificate and the connection has none';
  return undefined;
}
