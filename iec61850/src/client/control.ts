/**
 * IEC 61850 controls over MMS (IEC 61850-7-2 §20, 8-1 §20): direct and select-before-operate, with normal or
 * enhanced security. Oper/SBOw/Cancel are built from the server's own type of those structures (ctlVal,
 * operTm, origin, ctlNum, T, Test, Check); enhanced security waits for the CommandTermination report; a
 * refusal is explained by the LastApplError the server sends (its AddCause in words).
 */
import type { MmsRequester } from '../mms/client.ts';
import type { AccessResult } from '../mms/mms_access.ts';
import type { MmsData } from '../mms/mms_data.ts';
import type { InformationReport } from '../mms/mms_pdu.ts';
import type { MmsType } from '../mms/mms_types.ts';
import { Iec61850Error } from './errors.ts';
import { childOf, parseReference, toMmsReference, toObjectName, type DataReference } from './reference.ts';
import { fromJson, toJson } from './values.ts';

/** The control models of IEC 61850-7-3 ctlModel, by value 0..4. */
export const CONTROL_MODELS = [
  'status-only',
  'direct-with-normal-security',
  'sbo-with-normal-security',
  'direct-with-enhanced-security',
  'sbo-with-enhanced-security',
] as const;

/** A control model. */
export type ControlModel = (typeof CONTROL_MODELS)[number];

/** Originator categories (orCat), by value. */
export const OR_CATEGORIES = [
  'not-supported',
  'bay-control',
  'station-control',
  'remote-control',
  'automatic-bay',
  'automatic-station',
  'automatic-remote',
  'maintenance',
  'process',
] as const;

/** Who operates: a category (name or value) and an identity (text, sent as octets). */
export type Origin = { orCat?: number | (typeof OR_CATEGORIES)[number]; orIdent?: string };

/** How to operate; without `model` the DO's ctlModel is read. */
export type OperateOptions = {
  model?: ControlModel;
  test?: boolean;
  check?: { synchrocheck?: boolean; interlockCheck?: boolean };
  origin?: Origin;
  /** Wait for CommandTermination at most this long (enhanced security); 10 s by default. */
  terminationTimeoutMs?: number;
};

/** A LastApplError report, decoded. */
export type LastApplError = { cntrlObj: string; error: number; errorText: string; addCause: number; addCauseText: string; ctlNum?: number };

const ADD_CAUSES = [
  'Unknown',
  'Not-supported',
  'Blocked-by-switching-hierarchy',
  'Select-failed',
  'Invalid-position',
  'Position-reached',
  'Parameter-change-in-execution',
  'Step-limit',
  'Blocked-by-Mode',
  'Blocked-by-process',
  'Blocked-by-interlocking',
  'Blocked-by-synchrocheck',
  'Command-already-in-execution',
  'Blocked-by-health',
  '1-of-n-control',
  'Abortion-by-cancel',
  'Time-limit-over',
  'Abortion-by-trip',
  'Object-not-selected',
  'Object-already-selected',
  'No-access-authority',
  'Ended-with-overshoot',
  'Abortion-due-to-deviation',
  'Abortion-by-communication-loss',
  'Blocked-by-command',
  'None',
  'Inconsistent-parameters',
  'Locked-by-other-client',
];
const CONTROL_ERRORS = ['No-error', 'Unknown', 'Timeout-test-not-ok', 'Operator-test-not-ok'];

/** The words of an AddCause value. */
export function addCauseText(code: number): string {
  return ADD_CAUSES[code] ?? `AddCause ${code}`;
}

/**
 * What a control needs from the device: its requests (those of one caller, bound to the caller's deadline:
 * a select's operate is not sent once the caller has given up) and the types of its variables.
 */
export type ControlContext = { client: MmsRequester; typeOf(mmsRef: string): Promise<MmsType | undefined> };

/** A control waiting for its CommandTermination: told apart from another of the same object by its ctlNum. */
type Waiter = { ctlNum: number; resolve(): void; reject(e: Error): void };

/**
 * Runs controls and watches the reports that answer them (LastApplError, CommandTermination), one tracker
 * an association; each control comes with the requests of its caller ({@link ControlContext}).
 */
export class ControlTracker {
  readonly #defaultOrigin: Origin;
  readonly #lastErrors = new Map<string, LastApplError>();
  /**
   * Controls waiting for their CommandTermination, by Oper reference: each its own waiter, so that two of
   * one object never take each other's place, and a termination goes to the control whose ctlNum it carries.
   */
  readonly #terminations = new Map<string, Set<Waiter>>();
  /** Control objects with a select, operate or cancel pending: one at a time, or outcomes get mixed up. */
  readonly #pending = new Set<string>();
  #ctlNum = 0;

  constructor(defaultOrigin: Origin = {}) {
    this.#defaultOrigin = defaultOrigin;
  }

  /** Takes a report of named variables; true when it was a control's. */
  handle(r: InformationReport): boolean {
    if (r.variables.kind !== 'variables') return false;
    const [first, second] = r.variables.names;
    if (first?.scope === 'vmd' && first.item === 'LastApplError') {
      const error = r.results[0]?.ok ? lastApplErrorOf(r.results[0].data) : undefined;
      // CntrlObj names the structure written (`…$CO$DO$Oper`, as libiec61850 sends it) or the object itself
      if (error) this.#lastErrors.set(error.cntrlObj.replace(/\$(Oper|SBOw|SBO|Cancel)$/, ''), error);
      // a LastApplError followed by the Oper value is a negative CommandTermination
      if (error && second?.scope === 'domain' && second.item.endsWith('$Oper'))
        this.#terminate(
          `${second.domain}/${second.item}`,
          ctlNumOf(r.results[1]) ?? error.ctlNum,
          refusal('operate', error.cntrlObj, error, undefined, true),
        );
      return true;
    }
    if (first?.scope === 'domain' && first.item.endsWith('$Oper')) {
      this.#terminate(`${first.domain}/${first.item}`, ctlNumOf(r.results[0]));
      return true;
    }
    return false;
  }

  /** Fails every control waiting for termination (the connection is gone). */
  closeAll(reason: Error): void {
    const all = [...this.#terminations.values()].flatMap((waiters) => [...waiters]);
    this.#terminations.clear();
    for (const w of all) w.reject(reason);
  }

  /**
   * Runs one operation on a control object; a second one while it is pending is refused at once
   * (`control_in_progress`), so each caller gets its own outcome.
   */
  async #exclusive(d: DataReference, work: () => Promise<void>): Promise<void> {
    const obj = toMmsReference(d);
    if (this.#pending.has(obj)) throw new Iec61850Error('control_in_progress', `another select, operate or cancel of ${obj} is pending`);
    this.#pending.add(obj);
    try {
      await work();
    } finally {
      this.#pending.delete(obj);
    }
  }

  /** Operates a controllable DO with `value` as ctlVal, following its control model, through `ctx`'s requests. */
  async operate(ctx: ControlContext, doRef: string, value: unknown, o: OperateOptions = {}): Promise<void> {
    const d = controllable(doRef);
    return this.#exclusive(d, () => this.#operate(ctx, d, value, o));
  }

  async #operate(ctx: ControlContext, d: DataReference, value: unknown, o: OperateOptions): Promise<void> {
    const model = o.model ?? (await this.#model(ctx, d));
    const ctlNum = this.#nextCtlNum();
    const obj = toMmsReference(d);
    if (model === 'status-only') throw new Iec61850Error('unsupported', `${obj} is status-only and cannot be operated`);
    if (model === 'sbo-with-normal-security') {
      const [sbo] = await ctx.client.read([toObjectName(childOf(d, 'SBO'))]);
      if (!sbo.ok || sbo.data.type !== 'visible-string' || sbo.data.value === '')
        throw refusal('select', obj, this.#lastErrors.get(obj), sbo.ok ? undefined : sbo.errorText);
    }
    if (model === 'sbo-with-enhanced-security') await this.#write(ctx, d, 'SBOw', value, ctlNum, o, 'select');
    if (model === 'direct-with-normal-security' || model === 'sbo-with-normal-security')
      return this.#write(ctx, d, 'Oper', value, ctlNum, o, 'operate');
    const operRef = toMmsReference(childOf(d, 'Oper'));
    const termination = this.#awaitTermination(operRef, ctlNum, o.terminationTimeoutMs ?? 10_000);
    // a negative termination may come before the write's answer: keep it from being an unhandled rejection
    termination.done.catch(() => undefined);
    try {
      await this.#write(ctx, d, 'Oper', value, ctlNum, o, 'operate');
    } catch (e) {
      termination.forget();
      throw e;
    }
    await termination.done;
  }

  /** Cancels a selection or a running control (writes Cancel). */
  async cancel(ctx: ControlContext, doRef: string, value: unknown, o: Omit<OperateOptions, 'model' | 'check'> = {}): Promise<void> {
    const d = controllable(doRef);
    return this.#exclusive(d, () => this.#write(ctx, d, 'Cancel', value, this.#nextCtlNum(), o, 'cancel'));
  }

  #nextCtlNum(): number {
    const n = this.#ctlNum;
    this.#ctlNum = (this.#ctlNum + 1) & 0xff;
    return n;
  }

  async #model(ctx: ControlContext, d: DataReference): Promise<ControlModel> {
    const ref = { ...d, fc: 'CF' as const, path: [...d.path, 'ctlModel'] };
    const [r] = await ctx.client.read([toObjectName(ref)]);
    if (!r.ok || (r.data.type !== 'integer' && r.data.type !== 'unsigned'))
      throw new Iec61850Error(
        'not_found',
        `${toMmsReference(d)} is not a control object on this device: its ctlModel (${toMmsReference(ref)}) cannot be read`,
      );
    const model = CONTROL_MODELS[Number(r.data.value)];
    if (!model) throw new Iec61850Error('unsupported', `ctlModel ${r.data.value} of ${toMmsReference(d)} is unknown`);
    return model;
  }

  async #write(
    ctx: ControlContext,
    d: DataReference,
    what: 'Oper' | 'SBOw' | 'Cancel',
    value: unknown,
    ctlNum: number,
    o: OperateOptions,
    step: string,
  ): Promise<void> {
    const ref = childOf(d, what);
    const type = await ctx.typeOf(toMmsReference(ref));
    if (type?.type !== 'structure')
      throw new Iec61850Error('not_found', `${toMmsReference(ref)} is not a control structure on this device`);
    const data = this.#structure(type, value, ctlNum, o, toMmsReference(ref));
    const obj = toMmsReference(d);
    this.#lastErrors.delete(obj);
    const [result] = await ctx.client.writeMany([{ ref: toObjectName(ref), data }]);
    if (!result.ok) throw refusal(step, obj, this.#lastErrors.get(obj), result.errorText);
  }

  #structure(type: Extract<MmsType, { type: 'structure' }>, value: unknown, ctlNum: number, o: OperateOptions, path: string): MmsData {
    const now = Date.now();
    const origin = { ...this.#defaultOrigin, ...o.origin };
    const orCat = typeof origin.orCat === 'string' ? OR_CATEGORIES.indexOf(origin.orCat) : (origin.orCat ?? 3);
    if (orCat < 0) throw new Iec61850Error('bad_value', `${path}: orCat '${origin.orCat}' is not one of ${OR_CATEGORIES.join(', ')}`);
    const fields: Record<string, unknown> = {
      ctlVal: value,
      operTm: now,
      origin: { orCat, orIdent: Buffer.from(origin.orIdent ?? '', 'utf8').toString('hex') },
      ctlNum,
      T: now,
      Test: o.test ?? false,
      Check: [o.check?.synchrocheck ?? false, o.check?.interlockCheck ?? false],
    };
    return {
      type: 'structure',
      value: type.components.map((c) => {
        if (c.name === undefined || !(c.name in fields))
          throw new Iec61850Error('unsupported', `${path} has a component '${c.name ?? '?'}' this client cannot fill`);
        return fromJson(fields[c.name], c.type, c.name, `${path}.${c.name}`);
      }),
    };
  }

  /**
   * Waits for the CommandTermination of the control `ctlNum` of `operRef`, at most `ms`; `forget` stops
   * waiting (its Oper was refused). The waiter is the control's own: it leaves only itself.
   */
  #awaitTermination(operRef: string, ctlNum: number, ms: number): { done: Promise<void>; forget(): void } {
    let forget = () => {};
    const done = new Promise<void>((resolve, reject) => {
      const waiters = this.#terminations.get(operRef) ?? new Set<Waiter>();
      this.#terminations.set(operRef, waiters);
      const settle = (f: () => void) => {
        clearTimeout(timer);
        waiters.delete(w);
        if (waiters.size === 0 && this.#terminations.get(operRef) === waiters) this.#terminations.delete(operRef);
        f();
      };
      const w: Waiter = { ctlNum, resolve: () => settle(resolve), reject: (e) => settle(() => reject(e)) };
      const timer = setTimeout(
        () => w.reject(new Iec61850Error('termination_timeout', `no CommandTermination for ${operRef} within ${ms} ms`)),
        ms,
      );
      waiters.add(w);
      forget = () => w.resolve();
    });
    return { done, forget };
  }

  /**
   * A CommandTermination of `operRef` (`error`: a negative one) goes to the control waiting with its ctlNum;
   * one without a readable ctlNum to the only control waiting, if only one is. One for a control that no
   * longer waits (it timed out, its caller gave up) is nobody's: it never ends a later control.
   */
  #terminate(operRef: string, ctlNum: number | undefined, error?: Error): void {
    const waiters = this.#terminations.get(operRef);
    if (!waiters) return;
    const w = ctlNum === undefined ? (waiters.size === 1 ? [...waiters][0] : undefined) : [...waiters].find((x) => x.ctlNum === ctlNum);
    if (!w) return;
    if (error) w.reject(error);
    else w.resolve();
  }
}

function controllable(doRef: string): DataReference {
  // a DO named without FC (`LD/LN.DO`) is a controllable one: read it as `[CO]`
  const text = typeof doRef === 'string' && !doRef.includes('$') && !doRef.includes('[') ? `${doRef.trim()}[CO]` : doRef;
  const r = parseReference(text);
  if (r.path.length === 0) throw new Iec61850Error('bad_reference', `'${doRef}' names no data object`);
  // the DO is addressed under CO whatever FC the caller wrote
  return { ...r, fc: 'CO' };
}

/**
 * The ctlNum of an Oper structure as a CommandTermination carries it (ctlVal, [operTm,] origin, ctlNum, T,
 * Test, Check: the component before the last time stamp, counted from the end, as ctlVal may be a
 * structure itself), or undefined when it is not there to read.
 */
function ctlNumOf(r: AccessResult | undefined): number | undefined {
  if (!r?.ok || r.data.type !== 'structure') return undefined;
  const v = r.data.value;
  let t = v.length - 1;
  while (t > 0 && v[t].type !== 'utc-time') t--;
  const n = t > 0 ? v[t - 1] : undefined;
  return n?.type === 'unsigned' || n?.type === 'integer' ? Number(n.value) : undefined;
}

/** The LastApplError structure: CntrlObj, Error, Origin, ctlNum, AddCause. */
export function lastApplErrorOf(d: MmsData): LastApplError | undefined {
  const v = toJson(d);
  if (!Array.isArray(v) || v.length < 5 || typeof v[0] !== 'string') return undefined;
  const error = Number(v[1]);
  const addCause = Number(v[4]);
  return {
    cntrlObj: v[0],
    error,
    errorText: CONTROL_ERRORS[error] ?? `Error ${error}`,
    addCause,
    addCauseText: addCauseText(addCause),
    ctlNum: Number(v[3]),
  };
}

/**
 * A refused select, operate or cancel; `details` carries the step, the data access error of the write
 * (when there was one), the LastApplError and whether it came as a negative CommandTermination.
 */
function refusal(step: string, obj: string, e: LastApplError | undefined, accessText?: string, termination = false): Iec61850Error {
  const code = step === 'select' ? 'select_failed' : 'control_failed';
  const details: Record<string, unknown> = {
    step,
    ...(accessText ? { accessError: accessText } : {}),
    ...(termination ? { termination } : {}),
    ...(e ? { lastApplError: e } : {}),
  };
  const how = termination ? 'ended by a negative CommandTermination' : 'refused';
  if (e) return new Iec61850Error(code, `${step} of ${obj} ${how}: ${e.addCauseText} (${e.errorText})`, details);
  return new Iec61850Error(code, `${step} of ${obj} ${how}${accessText ? `: ${accessText}` : ''}`, details);
}
