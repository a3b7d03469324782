/** True when a subject matches a subscription pattern with NATS wildcards (`*` one token, `>` the rest). */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

/** Subjects found valid before; cleared when full (a process that names a subject per entity still checks it right). */
const validSubjects = new Set<string>();
const maxRemembered = 4096;

/** True when a subject is valid for publishing: non-empty tokens, no whitespace, no wildcards. */
export function isValidSubject(subject: string): boolean {
  if (validSubjects.has(subject)) return true;
  if (subject.length === 0 || /\s/.test(subject)) return false;
  if (!subject.split('.').every((t) => t.length > 0 && t !== '*' && t !== '>')) return false;
  // A process sends on a few subjects, again and again: each is split once, not once a message.
  if (validSubjects.size >= maxRemembered) validSubjects.clear();
  validSubjects.add(subject);
  return true;
}

/** True when a subject is valid for subscribing: non-empty tokens, no whitespace, `>` only as the last token. */
export function isValidPattern(pattern: string): boolean {
  if (pattern.length === 0 || /\s/.test(pattern)) return false;
  const tokens = pattern.split('.');
  return tokens.every((t, i) => t.length > 0 && (t !== '>' || i === tokens.length - 1));
}

/**
 * A subject prefix as part of a stream or bucket name, which may hold only letters, digits, `_` and `-`:
 * `.` becomes `-`, and the two characters that could then be confused are escaped (`-` as `_h`, `_` as
 * `_u`). Decoding is unambiguous, so two prefixes never share a name: `a.b` is `a-b`, `a_b` is `a_ub`,
 * `a-b` is `a_hb`. Prefixes of letters and digits alone keep their text.
 */
export function prefixToken(prefix: string): string {
  return prefix.replace(/[._-]/g, (c) => (c === '.' ? '-' : c === '-' ? '_h' : '_u'));
}
