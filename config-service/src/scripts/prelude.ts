/**
 * The `ins` object a script sees, written in the script's own language and evaluated inside its QuickJS
 * context before the script (never in the host). It turns every argument into one JSON text inside the
 * sandbox, so that the host functions behind it only ever receive strings: a hostile getter, `toJSON` or
 * `toString` runs in the sandbox, under its deadline and memory limit, and cannot reach the host. The host
 * functions come in as the argument `host` and are kept in this closure only; `ins` is frozen and
 * neither writable nor configurable on the global object. Answers the two helpers the host uses on the
 * script's values: `json` (a value as JSON text, undefined for none) and `fail` (the Error a refused
 * host call rejects with).
 */
export const preludeSource = `(function (host) {
  'use strict';
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const text = String;
  const freeze = Object.freeze;
  const join = (list) => {
    let out = '';
    for (let i = 0; i < list.length; i++) out += (i === 0 ? '' : ' ') + list[i];
    return out;
  };
  const args = (list) => {
    const json = stringify(list);
    if (typeof json !== 'string') throw new TypeError('the arguments are not JSON values');
    return json;
  };
  const call = (kind, list) => host.call(kind, args(list));
  const format = (value) => {
    if (typeof value === 'string') return value;
    try {
      const json = stringify(value);
      return json === undefined ? text(value) : json;
    } catch (e) {
      return text(value);
    }
  };
  const ins = freeze({
    read: (connectionId, reference) => call('read', [connectionId, reference]),
    values: (connectionId) => call('values', [connectionId]),
    write: (connectionId, reference, value) => call('write', [connectionId, reference, value === undefined ? null : value]),
    operate: (connectionId, reference, value, options) =>
      call('operate', [connectionId, reference, value === undefined ? null : value, options === undefined ? {} : options]),
    log: (...items) => {
      const parts = [];
      for (let i = 0; i < items.length; i++) parts[i] = format(items[i]);
      host.log(join(parts));
    },
    now: () => host.now(),
    state: freeze({
      get: () => {
        const json = host.stateGet();
        return json === null ? null : parse(json);
      },
      set: (value) => {
        const json = stringify(value === undefined ? null : value);
        host.stateSet(json === undefined ? 'null' : json);
      },
    }),
  });
  Object.defineProperty(globalThis, 'ins', { value: ins, enumerable: false, writable: false, configurable: false });
  const fail = (message, code, status, deviceError) => {
    const error = new Error(message);
    error.name = 'HostError';
    if (code !== undefined) error.code = code;
    if (status !== undefined) error.status = status;
    if (deviceError !== undefined) error.deviceError = parse(deviceError);
    return error;
  };
  return { json: (value) => stringify(value), fail };
})`;

/** What the script's code is wrapped in: an async function, so that it may `await` and `return`. */
export const scriptPrefix = '(async function () {';
export const scriptSuffix = '\n})';

/** The file name errors in the script's own code carry. */
export const scriptFile = 'script.js';
