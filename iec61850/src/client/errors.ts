/**
 * The IEC 61850 client layer's own refusals, raised before anything is sent (a bad reference, a value that
 * does not fit the variable's type) or when the device answers outside the standard (a control refused with
 * LastApplError, a report nobody enabled). MMS and connection failures pass through as MmsError and
 * MmsConnectionError.
 */

/**
 * Stable codes: `bad_reference`, `bad_value`, `unknown_type`, `not_found`, `select_failed`, `control_failed`,
 * `termination_timeout`, `bad_report`, `unknown_report`, `unsupported`, `read_only` (a write the functional
 * constraint rules out), `control_in_progress` (another operation on the object is pending), `rptid_conflict`
 * (a report block's RptID is another enabled block's and the device refused a unique one).
 */
export type Iec61850ErrorCode =
  | 'bad_reference'
  | 'bad_value'
  | 'unknown_type'
  | 'not_found'
  | 'select_failed'
  | 'control_failed'
  | 'termination_timeout'
  | 'bad_report'
  | 'unknown_report'
  | 'unsupported'
  | 'read_only'
  | 'control_in_progress'
  | 'rptid_conflict';

/** A refusal of the IEC 61850 layer; `details` carries structured context (e.g. the LastApplError). */
export class Iec61850Error extends Error {
  override readonly name = 'Iec61850Error';
  readonly code: Iec61850ErrorCode;
  readonly details?: Record<string, unknown>;

  constructor(code: Iec61850ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    if (details !== undefined) this.details = details;
  }
}
