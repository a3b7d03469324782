/**
 * What a device said, as the API answers it. The IEC 61850 layer and the MMS client fail with typed
 * errors; this module turns each into the problem an operator can act on: the device's own refusal
 * (`device_refused`, 502, with `deviceError`), a request the model rules out before the device is asked
 * (400, 404), a control already running on the object (409), a device that did not answer in time, or a
 * request that waited too long behind others on the association (504).
 * Told apart by type and code, never by an error's name.
 */
import { ProblemError } from '@scada/contracts';
import { dataAccessErrorText, Iec61850Error, MmsConnectionError, MmsError } from '@scada/iec61850';

/** The device service a refusal answered. */
export type DeviceService =
  | 'read'
  | 'write'
  | 'select'
  | 'operate'
  | 'cancel'
  | 'enable-report'
  | 'disable-report'
  | 'read-data-set'
  | 'browse'
  | 'read-sgcb'
  | 'select-active-sg'
  | 'select-edit-sg'
  | 'set-edit-sg-values'
  | 'confirm-edit-sg-values'
  | 'file-directory'
  | 'file-open'
  | 'file-read'
  | 'file-delete'
  | 'read-journal';

/** The device's reason, as `deviceError` of a `device_refused` problem carries it. */
export type DeviceError = { service: DeviceService; error: string; addCause?: string };

/** The FileProblem of a name the device has no file of (ISO 9506-2). */
const FILE_NON_EXISTENT = 7;

/** Data access errors that mean the device has no such object (an object the model does not have: 404). */
const NO_SUCH_OBJECT = new Set([4, 10]);

/** The `device_refused` problem for a reason the device gave. */
export function deviceRefused(reference: string, deviceError: DeviceError): ProblemError {
  const why = deviceError.addCause ? `${deviceError.error}, ${deviceError.addCause}` : deviceError.error;
  return new ProblemError('device_refused', `The device refused ${deviceError.service} of ${reference}: ${why}`, {
    extensions: { deviceError },
  });
}

function fromLayer(err: Iec61850Error, service: DeviceService, reference: string): ProblemError {
  switch (err.code) {
    case 'bad_reference':
    case 'bad_value':
    case 'unsupported':
    case 'read_only':
      return new ProblemError('bad_request', err.message);
    case 'not_found':
      return new ProblemError('not_found', err.message);
    case 'control_in_progress':
      return new ProblemError('control_in_progress', err.message);
    case 'rptid_conflict':
      return new ProblemError('rptid_conflict', err.message, { extensions: err.details ?? {} });
    case 'termination_timeout':
      return new ProblemError('upstream_timeout', err.message);
    case 'select_failed':
    case 'control_failed': {
      const d = (err.details ?? {}) as {
        step?: DeviceService;
        accessError?: string;
        termination?: boolean;
        lastApplError?: { addCauseText: string };
      };
      const error =
        d.accessError ?? (d.termination ? 'negative-command-termination' : err.code === 'select_failed' ? 'select-refused' : 'refused');
      return deviceRefused(reference, {
        service: d.step ?? service,
        error,
        ...(d.lastApplError ? { addCause: d.lastApplError.addCauseText } : {}),
      });
    }
    default:
      return new ProblemError('bad_gateway', err.message, { cause: err });
  }
}

function fromMms(err: MmsError, service: DeviceService, reference: string): ProblemError {
  // the file services' own class: file-non-existent is a name the device has no file of
  if (err.errorClass === 'file') {
    if (err.code === FILE_NON_EXISTENT) return new ProblemError('not_found', `The device has no file ${reference}`);
    return deviceRefused(reference, { service, error: err.text.replace(/^file: /, '') });
  }
  if (err.kind === 'access') {
    if (NO_SUCH_OBJECT.has(err.code)) return new ProblemError('not_found', `The device has no object ${reference}`);
    return deviceRefused(reference, { service, error: dataAccessErrorText(err.code) });
  }
  // GetVariableAccessAttributes of an unknown name: access/object-non-existent or definition/object-undefined
  if ((err.errorClass === 'access' && err.code === 2) || (err.errorClass === 'definition' && err.code === 1)) {
    return new ProblemError('not_found', `The device has no object ${reference}`);
  }
  return deviceRefused(reference, { service, error: err.text });
}

/** Runs a device operation; whatever it fails with becomes the problem the API answers. */
export async function answer<T>(service: DeviceService, reference: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw deviceProblem(err, service, reference);
  }
}

/** The problem for any failure of a device operation on `reference`. */
export function deviceProblem(err: unknown, service: DeviceService, reference: string): ProblemError {
  if (err instanceof ProblemError) return err;
  if (err instanceof Iec61850Error) return fromLayer(err, service, reference);
  if (err instanceof MmsError) return fromMms(err, service, reference);
  if (err instanceof MmsConnectionError && err.code === 'request_timeout')
    return new ProblemError('upstream_timeout', `The device did not answer ${service} of ${reference} in time`);
  if (err instanceof MmsConnectionError && err.code === 'deadline_passed')
    return new ProblemError(
      'upstream_timeout',
      `${service} of ${reference} was not sent: the request's deadline had passed (${err.message})`,
    );
  if (err instanceof MmsConnectionError && err.code === 'queue_timeout')
    return new ProblemError(
      'upstream_timeout',
      `${service} of ${reference} was not sent: the device is busy with earlier requests (${err.message})`,
    );
  return new ProblemError('bad_gateway', `The device failed ${service} of ${reference}: ${(err as Error).message}`, { cause: err });
}
