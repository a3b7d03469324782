/**
 * Alarm states and their journal in the protocol schema (migrations/0007_alarms.sql). Every change of a
 * state is made under the row's lock in one transaction with its journal row, so the evaluator and an
 * operator acting at once each see the other's result, and a transition is written exactly once.
 */
import type { AlarmJournalRow, AlarmStateName, AlarmStatus, EvaluatedAlarm } from '@scada/contracts';
import type { Queryable, Store } from '@scada/platform';

/** A state row as the service reads it. */
export type StateRow = {
  space: string;
  alarmId: string;
  connectionId: string;
  groupId: string;
  projectId: string;
  name: string;
  reference: string;
  priority: number;
  message: string;
  state: AlarmStateName;
  active: boolean;
  pendingSince: Date | null;
  value: unknown;
  since: Date;
  raisedAt: Date | null;
  shelvedUntil: Date | null;
  shelveReason: string | null;
  by: string | null;
  lastValueAt: Date | null;
};

/** What a decision changes of a row; `to` and `comment` make a journal row when `to` differs from the state. */
export type StateChange = Partial<
  Pick<StateRow, 'active' | 'pendingSince' | 'value' | 'raisedAt' | 'shelvedUntil' | 'shelveReason' | 'lastValueAt'>
> & {
  to?: AlarmStateName;
  by?: string | null;
  comment?: string | null;
};

/** A transition written: its journal row, with the row after it. */
export type Written = { row: StateRow; journal: AlarmJournalRow | null };

const columns =
  'space, alarm_id::text as alarm_id, connection_id::text as connection_id, group_id::text as group_id, project_id::text as project_id, ' +
  'name, reference, priority, message, state, active, pending_since, value, since, raised_at, shelved_until, shelve_reason, by, last_value_at';

const date = (v: unknown) => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));

function rowOf(r: Record<string, unknown>): StateRow {
  return {
    space: String(r.space),
    alarmId: String(r.alarm_id),
    connectionId: String(r.connection_id),
    groupId: String(r.group_id),
    projectId: String(r.project_id),
    name: String(r.name),
    reference: String(r.reference),
    priority: Number(r.priority),
    message: String(r.message),
    state: r.state as AlarmStateName,
    active: Boolean(r.active),
    pendingSince: date(r.pending_since),
    value: r.value ?? null,
    since: date(r.since) as Date,
    raisedAt: date(r.raised_at),
    shelvedUntil: date(r.shelved_until),
    shelveReason: (r.shelve_reason as string | null) ?? null,
    by: (r.by as string | null) ?? null,
    lastValueAt: date(r.last_value_at),
  };
}

/** A state row as the API answers it. */
export function statusOf(r: StateRow): AlarmStatus {
  return {
    alarmId: r.alarmId,
    name: r.name,
    groupId: r.groupId,
    projectId: r.projectId,
    connectionId: r.connectionId,
    reference: r.reference,
    priority: r.priority,
    message: r.message,
    state: r.state,
    active: r.active,
    value: r.value,
    since: r.since.toISOString(),
    raisedAt: r.raisedAt?.toISOString() ?? null,
    shelvedUntil: r.state === 'shelved' ? (r.shelvedUntil?.toISOString() ?? null) : null,
    shelveReason: r.state === 'shelved' ? r.shelveReason : null,
    by: r.by,
  };
}

/**
 * Takes up a space's definitions: a row (normal) for each alarm not seen before, the definition's fields
 * on every row, and the rows of alarms no longer defined removed (their journal stays).
 */
export async function syncDefinitions(store: Store, space: string, defs: readonly EvaluatedAlarm[], now: Date): Promise<void> {
  await store.query(
    `with defs as (
       select * from jsonb_to_recordset($2::jsonb) as d(id uuid, "connectionId" uuid, "groupId" uuid, "projectId" uuid, name text, reference text, priority integer, message text)
     ), gone as (
       delete from protocol.alarm_states s where s.space = $1 and not exists (select 1 from defs d where d.id = s.alarm_id)
     )
     insert into protocol.alarm_states (space, alarm_id, connection_id, group_id, project_id, name, reference, priority, message, state, since)
       select $1, d.id, d."connectionId", d."groupId", d."projectId", d.name, d.reference, d.priority, d.message, 'normal', $3 from defs d
     on conflict (space, alarm_id) do update set connection_id = excluded.connection_id, group_id = excluded.group_id,
       project_id = excluded.project_id, name = excluded.name, reference = excluded.reference, priority = excluded.priority,
       message = excluded.message`,
    [
      space,
      // In id order, the order every change of several rows locks them in.
      JSON.stringify(
        [...defs]
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .map((d) => ({
            id: d.id,
            connectionId: d.connectionId,
            groupId: d.groupId,
            projectId: d.projectId,
            name: d.name,
            reference: d.reference,
            priority: d.priority,
            message: d.message,
          })),
      ),
      now,
    ],
  );
}

/**
 * Changes one alarm under its row's lock: `decide` sees the row and answers the change (null: none).
 * A change of state appends its journal row in the same transaction. `holder`, when given, names the
 * replica that must still hold the connection's lease for the change to be written (the evaluator's
 * changes: a replica that lost the connection writes nothing). Null when there is no such row.
 */
export async function changeAlarm(
  store: Store,
  space: string,
  alarmId: string,
  now: Date,
  decide: (row: StateRow) => StateChange | null,
  holder?: string,
): Promise<Written | null> {
  return store.transaction(async (tx) => {
    const lease = holder
      ? ` and exists (select 1 from protocol.session_leases l where l.space = s.space and l.connection_id = s.connection_id and l.owner = $3 and l.expires_at >= now())`
      : '';
    const { rows } = await tx.query(
      `select ${columns} from protocol.alarm_states s where space = $1 and alarm_id = $2${lease} for update`,
      holder ? [space, alarmId, holder] : [space, alarmId],
    );
    if (!rows[0]) return null;
    const row = rowOf(rows[0] as Record<string, unknown>);
    const change = decide(row);
    if (!change) return { row, journal: null };
    return apply(tx, row, change, now);
  });
}

/**
 * Changes several alarms of one space in one transaction, in the order given (an alarm may come more than
 * once: each decision sees the row as the one before left it); the rows are locked first, in id order.
 * As {@link changeAlarm}, with `holder`'s lease required; alarms without a row (or whose connection the
 * holder no longer holds) are passed over. Answers what was written, in order.
 */
export async function changeAlarms(
  store: Store,
  space: string,
  steps: readonly { alarmId: string; decide: (row: StateRow) => StateChange | null }[],
  now: Date,
  holder: string,
): Promise<Written[]> {
  if (steps.length === 0) return [];
  return store.transaction(async (tx) => {
    const ids = [...new Set(steps.map((s) => s.alarmId))].sort();
    const { rows } = await tx.query(
      `select ${columns} from protocol.alarm_states s where space = $1 and alarm_id = any($2::uuid[])
         and exists (select 1 from protocol.session_leases l where l.space = s.space and l.connection_id = s.connection_id and l.owner = $3 and l.expires_at >= now())
       order by alarm_id for update`,
      [space, ids, holder],
    );
    const current = new Map(rows.map((r) => [String((r as { alarm_id: string }).alarm_id), rowOf(r as Record<string, unknown>)]));
    const changed = new Set<string>();
    const moves: { row: StateRow; next: StateRow; change: StateChange }[] = [];
    for (const step of steps) {
      const row = current.get(step.alarmId);
      if (!row) continue;
      const change = step.decide(row);
      if (!change) continue;
      const next = nextRow(row, change, now);
      current.set(step.alarmId, next);
      changed.add(step.alarmId);
      if (next.state !== row.state) moves.push({ row, next, change });
    }
    if (changed.size === 0) return [];
    // Three statements whatever the number of alarms: the rows, the journal's numbers, the journal rows.
    await tx.query(
      `update protocol.alarm_states s set state = n.state, active = n.active, pending_since = n.pending_since, value = n.value,
         since = n.since, raised_at = n.raised_at, shelved_until = n.shelved_until, shelve_reason = n.shelve_reason, by = n.by,
         last_value_at = n.last_value_at
       from jsonb_to_recordset($2::jsonb) as n(alarm_id uuid, state text, active boolean, pending_since timestamptz, value jsonb,
         since timestamptz, raised_at timestamptz, shelved_until timestamptz, shelve_reason text, by text, last_value_at timestamptz)
       where s.space = $1 and s.alarm_id = n.alarm_id`,
      [space, JSON.stringify([...changed].map((id) => recordOf(current.get(id) as StateRow)))],
    );
    if (moves.length === 0) return [];
    const { rows: numbers } = await tx.query<{ seq: string }>(
      `select nextval(pg_get_serial_sequence('protocol.alarm_journal', 'seq'))::text as seq from generate_series(1, $1)`,
      [moves.length],
    );
    const seqs = numbers.map((r) => BigInt(r.seq)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const out: Written[] = moves.map(({ row, next, change }, i) => ({
      row: next,
      journal: {
        seq: String(seqs[i]),
        alarmId: row.alarmId,
        from: row.state,
        to: next.state,
        at: now.toISOString(),
        by: change.by ?? null,
        value: next.value ?? null,
        comment: change.comment ?? null,
      },
    }));
    await tx.query(
      `insert into protocol.alarm_journal (seq, space, alarm_id, from_state, to_state, at, by, value, comment)
       select j.seq, $1, j."alarmId", j."from", j."to", j.at, j.by, j.value, j.comment
       from jsonb_to_recordset($2::jsonb) as j(seq bigint, "alarmId" uuid, "from" text, "to" text, at timestamptz, by text, value jsonb, comment text)`,
      [space, JSON.stringify(out.map((w) => w.journal))],
    );
    return out;
  });
}

/** A row after a change: a change of state moves `since` and names who made it. */
function nextRow(row: StateRow, change: StateChange, now: Date): StateRow {
  const moved = change.to !== undefined && change.to !== row.state;
  return {
    ...row,
    ...Object.fromEntries(Object.entries(change).filter(([k, v]) => v !== undefined && k !== 'to' && k !== 'comment' && k !== 'by')),
    ...(moved ? { state: change.to as AlarmStateName, since: now, by: change.by ?? null } : {}),
  };
}

/** A row as a record of the update's JSON. */
function recordOf(r: StateRow) {
  return {
    alarm_id: r.alarmId,
    state: r.state,
    active: r.active,
    pending_since: r.pendingSince?.toISOString() ?? null,
    value: r.value ?? null,
    since: r.since.toISOString(),
    raised_at: r.raisedAt?.toISOString() ?? null,
    shelved_until: r.shelvedUntil?.toISOString() ?? null,
    shelve_reason: r.shelveReason,
    by: r.by,
    last_value_at: r.lastValueAt?.toISOString() ?? null,
  };
}

async function apply(tx: Queryable, row: StateRow, change: StateChange, now: Date): Promise<Written> {
  const moved = change.to !== undefined && change.to !== row.state;
  const next: StateRow = {
    ...row,
    ...Object.fromEntries(Object.entries(change).filter(([k, v]) => v !== undefined && k !== 'to' && k !== 'comment' && k !== 'by')),
    ...(moved ? { state: change.to as AlarmStateName, since: now, by: change.by ?? null } : {}),
  };
  await tx.query(
    `update protocol.alarm_states set state = $3, active = $4, pending_since = $5, value = $6::jsonb, since = $7, raised_at = $8,
       shelved_until = $9, shelve_reason = $10, by = $11, last_value_at = $12
     where space = $1 and alarm_id = $2`,
    [
      row.space,
      row.alarmId,
      next.state,
      next.active,
      next.pendingSince,
      JSON.stringify(next.value ?? null),
      next.since,
      next.raisedAt,
      next.shelvedUntil,
      next.shelveReason,
      next.by,
      next.lastValueAt,
    ],
  );
  if (!moved) return { row: next, journal: null };
  const comment = change.comment ?? null;
  const { rows } = await tx.query<{ seq: string }>(
    `insert into protocol.alarm_journal (space, alarm_id, from_state, to_state, at, by, value, comment)
     values ($1, $2, $3, $4, $5, $6, $7::jsonb, $8) returning seq::text as seq`,
    [row.space, row.alarmId, row.state, next.state, now, change.by ?? null, JSON.stringify(next.value ?? null), comment],
  );
  return {
    row: next,
    journal: {
      seq: String(rows[0]?.seq),
      alarmId: row.alarmId,
      from: row.state,
      to: next.state,
      at: now.toISOString(),
      by: change.by ?? null,
      value: next.value ?? null,
      comment,
    },
  };
}

/** One alarm's row; null when the space holds none with that id. */
export async function readAlarm(db: Queryable, space: string, alarmId: string): Promise<StateRow | null> {
  const { rows } = await db.query(`select ${columns} from protocol.alarm_states where space = $1 and alarm_id = $2`, [space, alarmId]);
  return rows[0] ? rowOf(rows[0] as Record<string, unknown>) : null;
}

/** The rows of a connection's alarms. */
export async function alarmsOfConnection(db: Queryable, space: string, connectionId: string): Promise<StateRow[]> {
  const { rows } = await db.query(`select ${columns} from protocol.alarm_states where space = $1 and connection_id = $2`, [
    space,
    connectionId,
  ]);
  return rows.map((r) => rowOf(r as Record<string, unknown>));
}

/** The alarms of a space that are not normal, filtered, by priority then by when they entered their state. */
export async function activeAlarms(
  db: Queryable,
  space: string,
  filter: { projectId?: string; groupId?: string; priority?: number; state?: string },
): Promise<StateRow[]> {
  const params: unknown[] = [space];
  const terms: string[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    terms.push(sql.replace('?', `$${params.length}`));
  };
  if (filter.projectId) add('project_id = ?', filter.projectId.toLowerCase());
  if (filter.groupId) add('group_id = ?', filter.groupId.toLowerCase());
  if (filter.priority !== undefined) add('priority <= ?', filter.priority);
  if (filter.state) add('state = ?', filter.state);
  const { rows } = await db.query(
    `select ${columns} from protocol.alarm_states where space = $1 and state <> 'normal'${terms.map((t) => ` and ${t}`).join('')}
     order by priority, since, alarm_id`,
    params,
  );
  return rows.map((r) => rowOf(r as Record<string, unknown>));
}

/** The shelves that expired by `now`, in every space: (space, alarm id). */
export async function expiredShelves(db: Queryable, now: Date): Promise<{ space: string; alarmId: string }[]> {
  const { rows } = await db.query<{ space: string; alarm_id: string }>(
    `select space, alarm_id::text as alarm_id from protocol.alarm_states where state = 'shelved' and shelved_until <= $1 limit 1000`,
    [now],
  );
  return rows.map((r) => ({ space: r.space, alarmId: r.alarm_id }));
}

/** The groups of a project with an alarm that is not normal. */
export async function activeGroupsOfProject(db: Queryable, space: string, projectId: string): Promise<string[]> {
  const { rows } = await db.query<{ group_id: string }>(
    `select distinct group_id::text as group_id from protocol.alarm_states where space = $1 and project_id = $2 and state <> 'normal'`,
    [space, projectId],
  );
  return rows.map((r) => r.group_id);
}

/** A page of the journal, oldest first. */
export async function journalPage(
  db: Queryable,
  space: string,
  q: {
    from?: string;
    to?: string;
    alarmId?: string;
    groupId?: string;
    priority?: number;
    state?: string;
    text?: string;
    after?: string;
    limit: number;
  },
): Promise<{ rows: AlarmJournalRow[]; next: string | null }> {
  const params: unknown[] = [space];
  const terms: string[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    terms.push(sql.replace('?', `$${params.length}`));
  };
  if (q.from) add('at >= ?', new Date(q.from));
  if (q.to) add('at < ?', new Date(q.to));
  if (q.alarmId) add('alarm_id = ?', q.alarmId.toLowerCase());
  // Group, priority and text look at the alarm as it is defined now (its state row holds the definition).
  const defined = (sql: string) => `alarm_id in (select s.alarm_id from protocol.alarm_states s where s.space = $1 and ${sql})`;
  if (q.groupId) add(defined('s.group_id = ?'), q.groupId.toLowerCase());
  if (q.priority !== undefined) add(defined('s.priority <= ?'), q.priority);
  if (q.state) add('to_state = ?', q.state);
  if (q.text) {
    params.push(`%${q.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    const like = `$${params.length}`;
    terms.push(`(comment ilike ${like} or by ilike ${like} or ${defined(`(s.name ilike ${like} or s.message ilike ${like})`)})`);
  }
  if (q.after) add('seq > ?', q.after);
  params.push(q.limit + 1);
  const { rows } = await db.query<Record<string, unknown>>(
    `select seq::text as seq, alarm_id::text as alarm_id, from_state, to_state, at, by, value, comment from protocol.alarm_journal
     where space = $1${terms.map((t) => ` and ${t}`).join('')} order by alarm_journal.seq limit $${params.length}`,
    params,
  );
  const page = rows.slice(0, q.limit).map((r) => ({
    seq: String(r.seq),
    alarmId: String(r.alarm_id),
    from: r.from_state as AlarmStateName,
    to: r.to_state as AlarmStateName,
    at: (date(r.at) as Date).toISOString(),
    by: (r.by as string | null) ?? null,
    value: r.value ?? null,
    comment: (r.comment as string | null) ?? null,
  }));
  return { rows: page, next: rows.length > q.limit ? (page.at(-1)?.seq ?? null) : null };
}
