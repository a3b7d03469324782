/**
 * What the console sends back of something it read: only the fields the operation's request body takes,
 * so the answer's own fields (`id`, `createdBy`, `creationDate`, …) are not sent and refused as unexpected.
 */

/**
 * The fields of each request body the console builds from an answer, by operationId, as JSON.
 * `console/build.ts` fills it in from the request schemas of the contracts when it bundles the console.
 */
declare const REQUEST_FIELDS: string;

const requestFields = JSON.parse(REQUEST_FIELDS) as Record<string, readonly string[]>;

/** The operations whose fields the build hands over. */
export type CopiedBody = 'createScript' | 'updateScript';

/** The part of `value` the body of `operationId` takes; a field left out stays out. */
export function bodyOf<T extends object>(operationId: CopiedBody, value: T): Partial<T> {
  const fields = new Set(requestFields[operationId] ?? []);
  return Object.fromEntries(Object.entries(value).filter(([name]) => fields.has(name))) as Partial<T>;
}
