/**
 * What a run of a script may use and how it can end: the vocabulary the pool (main thread) and the
 * sandbox (worker thread) share.
 */

/** Limits of one run. */
export type SandboxLimits = {
  /** Memory the script's QuickJS runtime may allocate. */
  memoryBytes: number;
  /** Stack the script's QuickJS runtime may use. */
  stackBytes: number;
  /** Wall time from the start of the run to its end, host calls included. */
  deadlineMs: number;
  /** Log lines kept; more are dropped and the run says `logsTruncated`. */
  logLines: number;
  /** Longest log line kept (UTF-8 bytes); a longer one is cut and the run says `logsTruncated`. */
  logLineBytes: number;
  /** Largest state (`ins.state.set`) as UTF-8 JSON. */
  stateBytes: number;
};

/** How a run ended. */
export const runOutcomes = ['ok', 'error', 'timeout', 'out_of_memory', 'stack_overflow'] as const;
export type RunOutcome = (typeof runOutcomes)[number];

/** Where in the script an error was raised (1-based), when the script's own code raised it. */
export type ScriptError = { name: string; message: string; line: number | null; column: number | null };

/** What a run answers. */
export type RunResult = {
  outcome: RunOutcome;
  /** The script's return value as JSON (null when it returned nothing a JSON text can hold, or failed). */
  result: unknown;
  logs: string[];
  /** It logged more lines, or longer ones, than are kept: a flag beside the outcome, as the contract has five outcomes. */
  logsTruncated?: true;
  durationMs: number;
  error?: ScriptError;
  /** The state the run left (JSON text), or undefined when it did not change it. */
  state?: string | null;
  /** The code did not compile: nothing of it ran (`error` says where). */
  compileFailed?: true;
};

/** The answer of a compile check: null when the code compiles. */
export type CompileProblem = ScriptError | null;

/** A call the script made to the plant (`ins.read`, `ins.values`, `ins.write`, `ins.operate`). */
export type HostCall =
  | { kind: 'read'; connectionId: string; reference: string }
  | { kind: 'values'; connectionId: string }
  | { kind: 'write'; connectionId: string; reference: string; value: unknown }
  | {
      kind: 'operate';
      connectionId: string;
      reference: string;
      value: unknown;
      options: { select?: boolean; test?: boolean; interlockCheck?: boolean; synchroCheck?: boolean };
    };

/** A refusal of a host call as the script sees it: an Error with these properties. */
export type HostFailure = { message: string; code?: string; status?: number; deviceError?: unknown };

/** Serves a script's host calls: answers the value (JSON) or throws a failure (`HostFailure`-shaped). */
export type HostApi = (call: HostCall, signal: AbortSignal) => Promise<unknown>;

/**
 * Calls to the plant one run may have unanswered at once; one more is refused at once (the script's promise
 * rejects with code `too_many_calls`). With the run's deadline, what a script that does not wait for its
 * calls can send a device is bounded, and nothing it sent waits behind the end of its run.
 */
export const maxCallsInFlight = 16;

/** The largest result a run answers (UTF-8 JSON); a larger one fails the run. */
export const maxResultBytes = 64 * 1024;
