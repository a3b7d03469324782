/**
 * The security settings of a device connection: an ACSE password and TLS (IEC 62351-3) material. They are
 * checked when saved (every certificate parses, the key is the client certificate's), sealed under
 * SECRETS_KEY bound to their connection, and opened only to associate. What answers show of them (whether
 * there is a password, the certificates' subjects and expiry dates, the server name) is kept apart in plain
 * columns, so that no read ever opens a secret.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { ProblemError, type ConnectionRequest } from '@scada/contracts';
import type { TlsOptions } from '@scada/iec61850';
import type { SecretBox } from '@scada/platform';

/** What the store keeps of a connection's TLS settings. */
export type StoredTls = {
  sealed: string;
  caSubject: string;
  caExpires: Date;
  clientSubject: string | null;
  clientExpires: Date | null;
  serverName: string | null;
};

/**
 * A change of the security settings, sealed: undefined keeps what is stored, null removes it (the
 * replacement's absent field and its explicit null).
 */
export type SecurityChange = { passwordSealed?: string | null; tls?: StoredTls | null };

/** The security settings as an association needs them, opened. */
export type OpenedSecurity = { password?: string; tls?: TlsOptions };

/** The sealed columns of a stored connection. */
export type SealedSecurity = { passwordSealed: string | null; tlsSealed: string | null; serverName: string | null };

const passwordPurpose = (space: string, id: string) => `iec61850-password:${space}/${id}`;
const tlsPurpose = (space: string, id: string) => `iec61850-tls:${space}/${id}`;

/** What a connection's password and TLS material are sealed for: bound to the connection, so that a value copied into another row does not open. */
export function securityPurposes(where: { space: string; id: string }): { password: string; tls: string } {
  return { password: passwordPurpose(where.space, where.id), tls: tlsPurpose(where.space, where.id) };
}

type TlsRequest = Exclude<ConnectionRequest['tls'], null | undefined>;
type Invalid = (field: string, message: string) => ProblemError;

/** The certificates of a PEM text, each parsed; a text without one, or with one that does not parse, is refused. */
function certificates(pem: string, field: string, invalid: Invalid): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw invalid(field, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw invalid(field, `certificate ${i + 1} does not parse`);
    }
  });
}

function privateKey(pem: string, field: string, invalid: Invalid): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    const encrypted = /passphrase|encrypted/i.test((err as Error).message) || pem.includes('ENCRYPTED');
    throw invalid(
      field,
      encrypted ? 'is encrypted; give the key unencrypted (it is sealed at rest)' : 'does not parse as a PEM private key',
    );
  }
}

/** A certificate's subject on one line (`C=DE, O=…, CN=…`). */
function subjectOf(cert: X509Certificate): string {
  return cert.subject.split('\n').filter(Boolean).join(', ');
}

/** Checks and seals TLS settings; answers what the store keeps. */
function sealTls(tls: TlsRequest, purpose: string, box: SecretBox, invalid: Invalid): StoredTls {
  const ca = certificates(tls.caCert, 'tls/caCert', invalid)[0]!;
  if ((tls.clientCert === undefined) !== (tls.clientKey === undefined))
    throw invalid(tls.clientCert === undefined ? 'tls/clientCert' : 'tls/clientKey', 'clientCert and clientKey go together');
  let client: X509Certificate | null = null;
  if (tls.clientCert !== undefined && tls.clientKey !== undefined) {
    client = certificates(tls.clientCert, 'tls/clientCert', invalid)[0]!;
    const key = privateKey(tls.clientKey, 'tls/clientKey', invalid);
    let matches = false;
    try {
      matches = client.checkPrivateKey(key);
    } catch {
      // a key of another kind than the certificate's: no match
    }
    if (!matches) throw invalid('tls/clientKey', 'is not the key of clientCert');
  }
  const material = { ca: tls.caCert, ...(tls.clientCert === undefined ? {} : { cert: tls.clientCert, key: tls.clientKey }) };
  return {
    sealed: box.seal(JSON.stringify(material), purpose),
    caSubject: subjectOf(ca),
    caExpires: new Date(ca.validTo),
    clientSubject: client ? subjectOf(client) : null,
    clientExpires: client ? new Date(client.validTo) : null,
    serverName: tls.serverName ?? null,
  };
}

/**
 * The sealed change a request makes to a connection's security settings. `path` is where the request's
 * connection sits in the body (`/body`, or `/body/connection` in a multipart upload), for the 400's errors.
 */
export function sealSecurity(
  request: ConnectionRequest,
  where: { space: string; id: string; path: string },
  box: SecretBox,
): SecurityChange {
  const invalid: Invalid = (field, message) =>
    new ProblemError('validation_failed', `The connection's ${field.replace('/', '.')} ${message}`, {
      errors: [{ path: `${where.path}/${field}`, message }],
    });
  const change: SecurityChange = {};
  if (request.authentication !== undefined)
    change.passwordSealed =
      request.authentication === null ? null : box.seal(request.authentication.password, passwordPurpose(where.space, where.id));
  if (request.tls !== undefined)
    change.tls = request.tls === null ? null : sealTls(request.tls, tlsPurpose(where.space, where.id), box, invalid);
  return change;
}

/** Opens the security settings of a connection to associate with its device. */
export function openSecurity(sealed: SealedSecurity, where: { space: string; id: string }, box: SecretBox): OpenedSecurity {
  const out: OpenedSecurity = {};
  if (sealed.passwordSealed !== null) out.password = box.open(sealed.passwordSealed, passwordPurpose(where.space, where.id));
  if (sealed.tlsSealed !== null) {
    const material = JSON.parse(box.open(sealed.tlsSealed, tlsPurpose(where.space, where.id))) as {
      ca: string;
      cert?: string;
      key?: string;
    };
    out.tls = { ...material, ...(sealed.serverName === null ? {} : { serverName: sealed.serverName }) };
  }
  return out;
}
