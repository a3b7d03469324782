/** Environment variables as the process received them. */
export type EnvSource = Record<string, string | undefined>;

/** Start-up configuration that is wrong: one message naming every bad variable. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * Reads configuration from the environment. Each read returns a usable value (the default when the
 * variable is bad) and records what is wrong, so that one pass over every section reports every bad
 * variable at once; `finish()` then throws a {@link ConfigError} when anything was wrong.
 */
export class EnvReader {
  private readonly env: EnvSource;
  private readonly problems: string[] = [];

  constructor(env: EnvSource) {
    this.env = env;
  }

  /** A string; empty counts as unset. */
  string(name: string, fallback: string): string {
    return this.optionalString(name) ?? fallback;
  }

  /** A string that may be absent. */
  optionalString(name: string): string | undefined {
    const raw = this.env[name];
    return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
  }

  /** An integer within bounds. */
  int(name: string, fallback: number, bounds: { min?: number; max?: number } = {}): number {
    const raw = this.optionalString(name);
    if (raw === undefined) return fallback;
    const min = bounds.min ?? Number.MIN_SAFE_INTEGER;
    const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
    const value = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      this.problems.push(`${name}: must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  /** A TCP port; 0 turns the listener off. */
  port(name: string, fallback: number): number {
    return this.int(name, fallback, { min: 0, max: 65535 });
  }

  /** One of a fixed set of words. */
  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const raw = this.optionalString(name);
    if (raw === undefined) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.problems.push(`${name}: must be one of ${allowed.join(', ')} (got "${raw}")`);
      return fallback;
    }
    return raw as T;
  }

  /** A comma-separated list, each item checked; an empty variable gives the fallback. */
  list(name: string, fallback: string[], check?: (item: string) => string | null): string[] {
    const raw = this.optionalString(name);
    if (raw === undefined) return fallback;
    const items = raw.split(/[\s,]+/).filter((s) => s.length > 0);
    const bad = check ? items.map((i) => [i, check(i)] as const).filter(([, why]) => why !== null) : [];
    if (bad.length > 0) {
      this.problems.push(`${name}: ${bad.map(([i, why]) => `"${i}" ${why}`).join('; ')}`);
      return fallback;
    }
    return items;
  }

  /** A URL whose scheme is one of the given ones. */
  optionalUrl(name: string, schemes: readonly string[]): string | undefined {
    const raw = this.optionalString(name);
    if (raw === undefined) return undefined;
    const urls = raw.split(',').map((s) => s.trim());
    for (const u of urls) {
      try {
        const parsed = new URL(u);
        if (!schemes.includes(parsed.protocol.replace(/:$/, ''))) throw new Error('scheme');
      } catch {
        this.problems.push(`${name}: must be a ${schemes.join(' or ')} URL (got "${redactUrl(u)}")`);
        return undefined;
      }
    }
    return raw;
  }

  /**
   * Records a problem found by a section's own cross-field check. A setting several sections share (the
   * secrets key) is named once, however many sections read it.
   */
  fail(problem: string): void {
    if (!this.problems.includes(problem)) this.problems.push(problem);
  }

  /** Throws when any variable was bad. */
  finish(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}

/** A URL with its password hidden, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):([^@]*)@/, '//$1:***@');
}
