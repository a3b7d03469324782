/**
 * The console's one way to the platform: `fetch` on the gateway's public API with the session cookies,
 * the chosen space in `X-Space`, and every refusal turned into a sentence a person can act on.
 */
import { signal } from '@preact/signals';

/** The space the console works in; sent as `X-Space` on every space-scoped request. */
export const currentSpace = signal<string | null>(null);

/** Called when the platform says the session is over (401 on an API call): the console shows sign-in. */
export const sessionEnded = signal(0);

/** A problem the platform answered, with the sentence to show for it. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** The problem's own fields (`errors`, `deviceError`, `retryAfter`, …) for screens that show more. */
  readonly problem: Record<string, unknown>;
  constructor(status: number, code: string, sentence: string, problem: Record<string, unknown>) {
    super(sentence);
    this.status = status;
    this.code = code;
    this.problem = problem;
  }
}

type Problem = {
  code?: string;
  detail?: string;
  errors?: { path?: string; message?: string }[];
  deviceError?: { service?: string; error?: string; addCause?: string };
  retryAfter?: number;
};

/** The field a validation error names, in words: `/body/port` → "port". */
const fieldOf = (path = '') => path.split('/').filter(Boolean).pop() ?? 'a field';

/** A request as the sentence of its problem needs it: what was asked of whom. */
export type Asked = { method: string; path: string };

/**
 * Who answers a request, as a sentence names it when it does not answer or cannot: the device itself for
 * an operation the protocol service carries to it, else the service that owns the path.
 */
export function answererOf(path: string): string {
  const p = path.split('?')[0] ?? '';
  if (/^\/(login|validate|refresh|logout)$/.test(p) || /^\/api\/(auth\/|users\/(reset-password|profile)$)/.test(p))
    return 'The sign-in service';
  if (/^\/api\/(users|spaces|ip)(\/|$)/.test(p)) return 'The user service';
  if (/^\/api\/connections\/[^/]+\/(read|write|control|reports|browse|files|logs|setting-groups)(\/|$)/.test(p)) return 'The device';
  if (/^\/api\/connections\/[^/]+\/history(\/|$)/.test(p)) return 'The history service';
  if (/^\/api\/(connections|protocols|sites|alarms|live)(\/|$)/.test(p)) return 'The connection service';
  return 'The configuration service';
}

/** A detail the platform wrote as a sentence, as one: a capital first and a full stop last. */
const asSentence = (detail: string) => `${detail.charAt(0).toUpperCase()}${detail.slice(1)}${/[.!?]$/.test(detail) ? '' : '.'}`;

/**
 * What a person reads for a problem: never the raw body, always what happened and what to do, in words
 * that fit what was asked (`asked`): a sign-in that times out is the sign-in service's, not a device's.
 */
export function sentenceFor(status: number, p: Problem, retryAfter: string | null, asked?: Asked): string {
  const wait = Number(retryAfter ?? p.retryAfter ?? 0);
  const who = answererOf(asked?.path ?? '');
  const again = wait ? `Try again in ${wait} seconds.` : 'Try again in a moment.';
  switch (p.code) {
    case 'invalid_credentials':
      return 'The user name or password is not right.';
    case 'unauthenticated':
    case 'invalid_token':
      return 'Your session has ended. Please sign in again.';
    case 'account_locked':
      return `This account is locked after too many failed attempts. Try again in ${wait || 'a few'} seconds.`;
    case 'rate_limited':
      return `Too many attempts. Wait ${wait || 'a few'} seconds and try again.`;
    case 'password_change_required':
      return 'You must choose a new password before you go on.';
    case 'reauthentication_required':
      return 'Confirm with your current password (and code, if you use one).';
    case 'space_forbidden':
      return 'You do not belong to this space.';
    case 'forbidden':
      return 'Your role does not allow this.';
    case 'ip_denied':
      return 'The platform does not accept requests from your address.';
    case 'csrf_rejected':
      return 'The request came from another site and was refused.';
    case 'not_found':
      return 'It no longer exists; someone may have deleted it.';
    case 'conflict':
      // The services say what is in the way: a name taken, the last administrator, a space someone needs.
      return p.detail ? asSentence(p.detail) : 'That name is already taken; choose another.';
    case 'not_connected':
      return 'The device is not connected. Start the session and try again.';
    case 'control_in_progress':
      return 'Another operation on this control is still running. Wait for it to end.';
    case 'device_refused': {
      const e = p.deviceError;
      const why = e ? `${e.error ?? 'no reason'}${e.addCause ? `, cause: ${e.addCause}` : ''}` : (p.detail ?? 'no reason given');
      return `The device refused it (${why}).`;
    }
    case 'rptid_conflict':
      return 'Another report block already sends this report id, and the device refused a new one.';
    case 'no_scl_file':
      return 'This connection has no SCL file; connect to the device or upload a file to browse it.';
    case 'scl_invalid':
      return `The SCL file cannot be used: ${p.errors?.[0]?.message ?? 'it is not a valid SCL file'}.`;
    case 'script_invalid':
      return `The script does not compile: ${p.errors?.[0]?.message ?? p.detail ?? 'syntax error'}.`;
    case 'payload_too_large':
      return 'The file is larger than the platform takes.';
    case 'validation_failed':
    case 'bad_request':
    case 'malformed_body': {
      const list = (p.errors ?? []).slice(0, 3).map((e) => `${fieldOf(e.path)} ${e.message ?? 'is not valid'}`);
      return list.length > 0 ? `Please check: ${list.join('; ')}.` : 'Some of what was entered is not valid.';
    }
    case 'upstream_timeout':
      return `${who} did not answer in time.${who === 'The device' ? ' Check its connection and try again.' : ` ${again}`}`;
    case 'overloaded':
      return `${who === 'The device' ? 'The platform' : who} is busy with other requests. ${again}`;
    case 'service_unavailable':
      return `${who === 'The device' ? 'The connection service' : who} is not running or is starting. ${again}`;
    case 'site_unreachable':
      return `The site of this device cannot be reached now. ${again}`;
    case 'bad_gateway':
      return `${who} answered something the platform could not understand.`;
  }
  if (status >= 500) return `The platform could not do this (error ${status}). Try again; if it persists, tell your administrator.`;
  return `The platform refused this (error ${status}).`;
}

/** Options of one call. */
export type CallOptions = { body?: unknown; form?: FormData; query?: Record<string, string | number | undefined> };

/**
 * Calls the API; answers the parsed JSON (or null for an empty answer) or throws an `ApiError` whose
 * message is the sentence to show. The session cookie goes along; the gateway renews it when needed.
 */
export async function api<T = unknown>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (currentSpace.value) headers['x-space'] = currentSpace.value;
  let body: BodyInit | undefined;
  if (options.form) body = options.form;
  else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const query = Object.entries(options.query ?? {}).filter(([, v]) => v !== undefined);
  const url = query.length > 0 ? `${path}?${new URLSearchParams(query.map(([k, v]) => [k, String(v)]))}` : path;
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'network', 'The platform cannot be reached. Check the network and try again.', {});
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const problem = (parsed && typeof parsed === 'object' ? parsed : {}) as Problem & Record<string, unknown>;
    if (res.status === 401 && path.startsWith('/api/')) sessionEnded.value++;
    throw new ApiError(
      res.status,
      problem.code ?? `http_${res.status}`,
      sentenceFor(res.status, problem, res.headers.get('retry-after'), { method, path }),
      problem,
    );
  }
  return parsed as T;
}

/** The message to show for anything a call threw. */
export function messageOf(err: unknown): string {
  return err instanceof ApiError ? err.message : 'Something went wrong in the console. Reload the page and try again.';
}
