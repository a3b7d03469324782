/**
 * Problem codes: the stable, snake_case error vocabulary shared by the gateway and every service.
 * Each code has one HTTP status and one title; the detail is written per occurrence.
 */
export const problemCodes = {
  validation_failed: { status: 400, title: 'Request validation failed' },
  bad_request: { status: 400, title: 'Bad request' },
  bad_header: { status: 400, title: 'Bad header' },
  malformed_body: { status: 400, title: 'Malformed request body' },
  scl_invalid: { status: 400, title: 'Invalid SCL file' },
  script_invalid: { status: 400, title: 'Script does not compile' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  invalid_credentials: { status: 401, title: 'Invalid credentials' },
  invalid_token: { status: 401, title: 'Invalid token' },
  forbidden: { status: 403, title: 'Forbidden' },
  reauthentication_required: { status: 403, title: 'Re-authentication required' },
  password_change_required: { status: 403, title: 'Password change required' },
  ip_denied: { status: 403, title: 'Address not allowed' },
  space_forbidden: { status: 403, title: 'Space not accessible' },
  csrf_rejected: { status: 403, title: 'Cross-site request rejected' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  would_lock_out_self: { status: 409, title: 'Change would lock out the caller' },
  not_connected: { status: 409, title: 'Not connected' },
  control_in_progress: { status: 409, title: 'Control in progress' },
  rptid_conflict: { status: 409, title: 'Report id in use' },
  no_scl_file: { status: 409, title: 'No SCL file' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  account_locked: { status: 423, title: 'Account locked' },
  rate_limited: { status: 429, title: 'Too many requests' },
  internal_error: { status: 500, title: 'Internal error' },
  bad_gateway: { status: 502, title: 'Bad gateway' },
  device_refused: { status: 502, title: 'Device refused' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  overloaded: { status: 503, title: 'Overloaded' },
  site_unreachable: { status: 503, title: 'Site unreachable' },
  upstream_timeout: { status: 504, title: 'Upstream timeout' },
} as const satisfies Record<string, { status: number; title: string }>;

/** A problem code known to the platform. */
export type ProblemCode = keyof typeof problemCodes;

/** One failed check of a validation problem. */
export type ProblemFieldError = { path: string; message: string };

/** An RFC 9457 problem body as the platform sends it. */
export type ProblemBody = {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  instance?: string;
  errors?: ProblemFieldError[];
  retryAfter?: number;
  [extension: string]: unknown;
};

/** The URI that names a problem type. */
export function problemType(code: ProblemCode): string {
  return `urn:scada:problem:${code}`;
}

/**
 * An error that carries a problem. Thrown by handlers anywhere in the platform; the boundary
 * (gateway middleware or bus server) turns it into a problem body. `expose` follows http-errors:
 * a 5xx never shows its detail to a client.
 */
export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly detail: string;
  readonly errors?: ProblemFieldError[];
  readonly retryAfter?: number;
  readonly headers: Record<string, string>;
  readonly extensions: Record<string, unknown>;
  readonly expose: boolean;
  /** Rebuilt from another service's answer: that service met the failure and logged it. */
  readonly relayed: boolean;

  constructor(
    code: ProblemCode,
    detail?: string,
    options: {
      errors?: ProblemFieldError[];
      retryAfter?: number;
      headers?: Record<string, string>;
      extensions?: Record<string, unknown>;
      cause?: unknown;
      relayed?: boolean;
    } = {},
  ) {
    const known = problemCodes[code];
    super(detail ?? known.title, { cause: options.cause });
    this.name = 'ProblemError';
    this.code = code;
    this.status = known.status;
    this.detail = detail ?? known.title;
    this.errors = options.errors;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
    this.relayed = options.relayed ?? false;
    // Internal failures and bad upstream answers never show their detail; the rest is meant for the client
    // (a device's refusal too: its reason is what the operator needs).
    this.expose = known.status !== 500 && code !== 'bad_gateway';
  }

  /** The problem body a client may see. */
  toBody(): ProblemBody {
    return problemBody(this.code, this.expose ? this.detail : problemCodes[this.code].title, {
      errors: this.errors,
      retryAfter: this.retryAfter,
      extensions: this.extensions,
    });
  }
}

/** Builds a problem body for a code. */
export function problemBody(
  code: ProblemCode,
  detail?: string,
  options: { errors?: ProblemFieldError[]; retryAfter?: number; extensions?: Record<string, unknown> } = {},
): ProblemBody {
  const known = problemCodes[code];
  const body: ProblemBody = {
    ...options.extensions,
    type: problemType(code),
    title: known.title,
    status: known.status,
    detail: detail ?? known.title,
    code,
  };
  if (options.errors && options.errors.length > 0) body.errors = options.errors;
  if (options.retryAfter !== undefined) body.retryAfter = options.retryAfter;
  return body;
}

/** True when a value looks like a problem body that crossed the bus. */
export function isProblemBody(value: unknown): value is ProblemBody {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === 'string' && v.code in problemCodes && typeof v.status === 'number';
}

/** Rebuilds a ProblemError from a body received over the bus. */
export function problemFromBody(body: ProblemBody): ProblemError {
  const { type: _t, title: _ti, status: _s, detail, code, errors, retryAfter, instance: _i, ...extensions } = body;
  return new ProblemError(code, detail, { errors, retryAfter, extensions, relayed: true });
}
