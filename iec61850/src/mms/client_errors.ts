/**
 * What an MMS client call can fail with: {@link MmsError} when the server answered with a confirmed error,
 * a reject or a data access error (the association lives on), and {@link MmsConnectionError} when the
 * connection could not be made or was lost (every pending call fails with it, the socket is closed).
 */
import type { RejectReason, ServiceError } from './mms_pdu.ts';

/** Where an MMS error came from. */
export type MmsErrorKind = 'service-error' | 'reject' | 'access' | 'initiate-error';

/** The server refused one request; `errorClass`, `code` and `text` say why. */
export class MmsError extends Error {
  override readonly name = 'MmsError';
  readonly kind: MmsErrorKind;
  /** The ServiceError class (`access`, `definition`...), `reject`'s PDU type, or `data-access`. */
  readonly errorClass: string;
  readonly code: number;
  readonly text: string;
  readonly additionalDescription?: string;

  constructor(kind: MmsErrorKind, errorClass: string, code: number, text: string, additionalDescription?: string) {
    super(`MMS ${kind}: ${text}${additionalDescription ? ` (${additionalDescription})` : ''}`);
    this.kind = kind;
    this.errorClass = errorClass;
    this.code = code;
    this.text = text;
    if (additionalDescription !== undefined) this.additionalDescription = additionalDescription;
  }

  /** The error of a confirmed-error PDU. */
  static fromServiceError(e: ServiceError, kind: MmsErrorKind = 'service-error'): MmsError {
    return new MmsError(kind, e.errorClass, e.code, e.text, e.additionalDescription);
  }

  /** The error of a reject PDU. */
  static fromReject(r: RejectReason): MmsError {
    return new MmsError('reject', r.pduType, r.code, `rejected ${r.text}`);
  }

  /** A DataAccessError of one variable in a read or write. */
  static fromAccess(code: number, text: string, variable: string): MmsError {
    return new MmsError('access', 'data-access', code, `${variable}: ${text}`);
  }
}

/**
 * Stable codes of connection failures: `connect_timeout`, `connect_failed`, `cotp_refused`, `session_refused`,
 * `association_refused`, `tls_failed`, `aborted`, `closed`, `protocol_error`, `socket_error`, `request_timeout`,
 * `queue_timeout` (a request that waited too long for a turn, never sent), `deadline_passed` (a request whose
 * caller's deadline passed before it was sent: never sent), `peer_unresponsive`, `too_large`,
 * `not_connected`, `cancelled`.
 */
export type ConnectionErrorCode =
  | 'connect_timeout'
  | 'connect_failed'
  | 'cotp_refused'
  | 'session_refused'
  | 'association_refused'
  | 'tls_failed'
  | 'aborted'
  | 'closed'
  | 'protocol_error'
  | 'socket_error'
  | 'request_timeout'
  | 'queue_timeout'
  | 'deadline_passed'
  | 'peer_unresponsive'
  | 'too_large'
  | 'not_connected'
  | 'cancelled';

/** The connection failed or ended; `code` is stable, `cause` holds the underlying error when there is one. */
export class MmsConnectionError extends Error {
  override readonly name = 'MmsConnectionError';
  readonly code: ConnectionErrorCode;

  constructor(code: ConnectionErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
  }
}
