/**
 * Where a service keeps messages larger than one bus message while they travel (`@scada/contracts`'
 * `staging.ts`): parts in a table of its own schema, `<schema>.staged_parts`, which the service's
 * migrations make. Parts belong to a space (`''` for calls outside one), so a reference names nothing of
 * another space; every replica reads what another staged. Unused parts are swept at the next stage.
 */
import { createHash, randomUUID } from 'node:crypto';
import { maxStagedParts, ProblemError, stagedMessageTtlSeconds, stagedPartBytes, type StagedReference } from '@scada/contracts';
import type { Queryable } from './store/store.ts';

/** A staged message as its reference names it. */
export type StagedRef = StagedReference;

/** A service's staged messages. */
export type Staging = {
  /** Keeps one part (a retried part replaces itself). */
  put(space: string, id: string, index: number, data: Uint8Array): Promise<void>;
  /** The message a reference names, checked against its size and digest, and dropped; 400 when it is not whole. */
  take(space: string, ref: StagedRef): Promise<Buffer>;
  /** Stages a whole message in parts; answers its reference. */
  stage(space: string, message: Uint8Array): Promise<StagedRef>;
  /** One part; the last one read (`index === parts - 1`) drops the message. Null when it is not there. */
  read(space: string, id: string, index: number, parts: number): Promise<Buffer | null>;
};

/**
 * The reference of a message cut into parts, and the parts. A message of more than `maxStagedParts` parts
 * is 413 before anything is staged: no reference could name it, and its parts would only fill the store
 * until they were swept (a list of many large animations, answered again and again).
 */
export function partsOf(message: Uint8Array): { ref: StagedRef; parts: Uint8Array[] } {
  if (message.byteLength > maxStagedParts * stagedPartBytes)
    throw new ProblemError(
      'payload_too_large',
      `The message has ${message.byteLength} bytes, more than the ${maxStagedParts * stagedPartBytes} that travel staged`,
    );
  const parts: Uint8Array[] = [];
  for (let at = 0; at < message.byteLength || parts.length === 0; at += stagedPartBytes) {
    parts.push(message.subarray(at, at + stagedPartBytes));
  }
  const sha256 = createHash('sha256').update(message).digest('hex');
  return { ref: { id: randomUUID(), parts: parts.length, bytes: message.byteLength, sha256 }, parts };
}

/** Checks a message put together from its parts against its reference; 400 `validation_failed` when it differs. */
export function checkWhole(ref: StagedRef, message: Buffer): Buffer {
  if (message.byteLength !== ref.bytes || createHash('sha256').update(message).digest('hex') !== ref.sha256) {
    throw new ProblemError('validation_failed', 'The staged message is not whole: a part is missing or differs');
  }
  return message;
}

/** Staging in the table `<schema>.staged_parts`. */
export function storeStaging(db: Queryable, schema: string): Staging {
  const table = `${schema}.staged_parts`;
  const drop = (space: string, id: string) => db.query(`delete from ${table} where space = $1 and id = $2`, [space, id]);
  return {
    async put(space, id, index, data) {
      // Whatever nobody took within the time goes with the next message staged (at its first part, not at
      // each): no timer of its own.
      if (index === 0) await db.query(`delete from ${table} where staged < now() - make_interval(secs => $1)`, [stagedMessageTtlSeconds]);
      await db.query(
        `insert into ${table} (space, id, idx, data) values ($1, $2, $3, $4) on conflict (space, id, idx) do update set data = excluded.data, staged = now()`,
        [space, id, index, Buffer.from(data)],
      );
    },
    async take(space, ref) {
      // Taken and dropped in one statement: no second replica can take the same parts meanwhile.
      const { rows: taken } = await db.query<{ idx: number; data: Buffer }>(
        `delete from ${table} where space = $1 and id = $2 returning idx, data`,
        [space, ref.id],
      );
      const rows = taken.sort((a, b) => Number(a.idx) - Number(b.idx));
      if (rows.length !== ref.parts || rows.some((r, i) => Number(r.idx) !== i)) {
        throw new ProblemError('validation_failed', `The staged message has ${rows.length} of its ${ref.parts} parts`);
      }
      return checkWhole(ref, Buffer.concat(rows.map((r) => Buffer.from(r.data))));
    },
    async stage(space, message) {
      const { ref, parts } = partsOf(message);
      for (const [index, part] of parts.entries()) await this.put(space, ref.id, index, part);
      return ref;
    },
    async read(space, id, index, parts) {
      const { rows } = await db.query<{ data: Buffer }>(`select data from ${table} where space = $1 and id = $2 and idx = $3`, [
        space,
        id,
        index,
      ]);
      if (index === parts - 1) await drop(space, id);
      return rows[0] ? Buffer.from(rows[0].data) : null;
    },
  };
}
