import type { HostCall } from './limits.ts';

/** The longest connection id and reference a host call takes (the protocol service checks them again). */
const maxIdLength = 64;
const maxReferenceLength = 255;
const operateOptions = new Set(['select', 'test', 'interlockCheck', 'synchroCheck']);

const isText = (v: unknown, max: number): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

/**
 * A host call as the script made it (its arguments decoded from the JSON text the sandbox sent), checked:
 * the call, or the reason it is refused (the script gets a TypeError with it).
 */
export function checkHostCall(kind: string, args: unknown): HostCall | string {
  if (!Array.isArray(args)) return 'the arguments are not a list';
  const [connectionId, reference, value, options] = args as unknown[];
  if (!isText(connectionId, maxIdLength))
    return `ins.${kind}: the first argument is a connection id (text of at most ${maxIdLength} characters)`;
  if (kind === 'values') return { kind, connectionId };
  if (!isText(reference, maxReferenceLength))
    return `ins.${kind}: the second argument is an object reference (text of at most ${maxReferenceLength} characters)`;
  if (kind === 'read') return { kind, connectionId, reference };
  if (kind === 'write') return { kind, connectionId, reference, value };
  if (kind !== 'operate') return `there is no ins.${kind}`;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) return 'ins.operate: the options are an object';
  const picked: Record<string, boolean> = {};
  for (const [key, flag] of Object.entries(options)) {
    if (!operateOptions.has(key)) return `ins.operate: unknown option "${key.slice(0, 40)}" (${[...operateOptions].join(', ')})`;
    if (typeof flag !== 'boolean') return `ins.operate: the option ${key} is true or false`;
    picked[key] = flag;
  }
  return { kind, connectionId, reference, value, options: picked };
}
