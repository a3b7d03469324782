/**
 * The parse report as it is being built: errors and warnings with their place in the file. Places of
 * model objects are kept aside (WeakMaps) so that checks made after the last byte can still point at the
 * element they are about, without the model carrying positions.
 *
 * Per-parse state lives in class instances rather than closures: V8 optimises the hot paths against the
 * functions they call, and a closure made per parse dies with it, taking the optimised code along; after a
 * few parses V8 gives up and every parse runs at half speed.
 */
import type { SclIssue, SclParseReport } from './browse_types.ts';

/** Where an element starts, and the element it sits in: enough to print a path on demand. */
export type Origin = { element: string; key?: string; line: number; column: number; parent?: Origin };

/** A bare position, for findings that are about no element. */
export type Position = { line: number; column: number };

/** More than this many findings of one severity are summed up in a last finding. */
const MAX_ISSUES = 500;

/** `/SCL/IED[simpleIO]/AccessPoint`: element names from the root, with their identifying attribute. */
export function pathOf(origin: Origin): string {
  const parts: string[] = [];
  for (let o: Origin | undefined = origin; o; o = o.parent) parts.push(o.key === undefined ? o.element : `${o.element}[${o.key}]`);
  return `/${parts.reverse().join('/')}`;
}

function issueAt(message: string, at: Origin | Position): SclIssue {
  const issue: SclIssue = { message, line: at.line, column: at.column };
  if ('element' in at) issue.path = pathOf(at);
  return issue;
}

/** Collects findings while a file is read and checked. */
export class Reporter {
  edition = 'unknown';
  readonly errors: SclIssue[] = [];
  readonly warnings: SclIssue[] = [];
  #droppedErrors = 0;
  #droppedWarnings = 0;
  readonly #places = new WeakMap<object, Origin>();
  /** Per owner, the index of its first item; items live in three flat columns (see `placeItem`). */
  readonly #firstItem = new WeakMap<object, number>();
  #itemOwner = new Int32Array(1024);
  #itemLine = new Int32Array(1024);
  #itemColumn = new Int32Array(1024);
  #itemCount = 0;
  readonly #once = new Map<string, { issue: SclIssue; message: string; count: number }>();

  /** Records an error at an origin or at a bare position. */
  error(message: string, at: Origin | Position): void {
    if (this.errors.length < MAX_ISSUES) this.errors.push(issueAt(message, at));
    else this.#droppedErrors++;
  }

  /** Records a warning at an origin or at a bare position. */
  warning(message: string, at: Origin | Position): SclIssue | undefined {
    if (this.warnings.length >= MAX_ISSUES) {
      this.#droppedWarnings++;
      return undefined;
    }
    const issue = issueAt(message, at);
    this.warnings.push(issue);
    return issue;
  }

  /** Records a warning once per key, counting the repeats into the first one's message. */
  warnOnce(key: string, message: string, at: Origin): void {
    const seen = this.#once.get(key);
    if (seen) {
      seen.count++;
      return;
    }
    const issue = this.warning(message, at);
    if (issue) this.#once.set(key, { issue, message, count: 1 });
  }

  /** Remembers where a model object came from. */
  place(node: object, origin: Origin): void {
    this.#places.set(node, origin);
  }

  /** Where a model object came from (a position 0:0 when unknown). */
  origin(node: object): Origin {
    return this.#places.get(node) ?? { element: '?', line: 0, column: 0 };
  }

  /**
   * Remembers where the next item of a numerous list came from (a logical node's configured values, a
   * data set's members). A large file has hundreds of thousands of them, so they take no object or array
   * each: three flat integer columns (owner, line, column), the owner named by the index of its first
   * item. An owner's items mostly follow each other, so finding one again (only to report it) is short.
   */
  placeItem(owner: object, line: number, column: number): void {
    let first = this.#firstItem.get(owner);
    if (first === undefined) {
      first = this.#itemCount;
      this.#firstItem.set(owner, first);
    }
    if (this.#itemCount === this.#itemOwner.length) this.#growItems();
    const at = this.#itemCount++;
    this.#itemOwner[at] = first;
    this.#itemLine[at] = Math.min(line, 0x7fffffff);
    this.#itemColumn[at] = Math.min(column, 0x7fffffff);
  }

  #growItems(): void {
    const grow = (a: Int32Array) => {
      const bigger = new Int32Array(a.length * 2);
      bigger.set(a);
      return bigger;
    };
    this.#itemOwner = grow(this.#itemOwner);
    this.#itemLine = grow(this.#itemLine);
    this.#itemColumn = grow(this.#itemColumn);
  }

  /** Where item `index` of an owner's list came from, as an element inside the owner's origin. */
  itemOrigin(owner: object, index: number, element: string, key?: string): Origin {
    const first = this.#firstItem.get(owner);
    let line = 0;
    let column = 0;
    if (first !== undefined) {
      for (let at = first, seen = 0; at < this.#itemCount; at++) {
        if (this.#itemOwner[at] !== first) continue;
        if (seen++ === index) {
          line = this.#itemLine[at];
          column = this.#itemColumn[at];
          break;
        }
      }
    }
    return { element, key, line, column, parent: this.#places.get(owner) };
  }

  /** The finished report. */
  done(): SclParseReport {
    for (const { issue, message, count } of this.#once.values()) {
      if (count > 1) issue.message = `${message} (${count} times; the first is shown)`;
    }
    if (this.#droppedErrors) this.errors.push({ message: `${this.#droppedErrors} more errors not listed`, line: 0, column: 0 });
    if (this.#droppedWarnings) this.warnings.push({ message: `${this.#droppedWarnings} more warnings not listed`, line: 0, column: 0 });
    return { edition: this.edition, errors: this.errors, warnings: this.warnings };
  }
}
