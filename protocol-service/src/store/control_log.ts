import type { Queryable } from '@scada/platform';

/**
 * What the control log keeps: writes, controls, and the setting group services (IEC 61850-7-2) of
 * `handlers/setting_groups.ts`.
 */
export type ControlLogAction =
  | 'write'
  | 'control'
  | 'select-active-sg'
  | 'select-edit-sg'
  | 'set-edit-sg-values'
  | 'confirm-edit-sg-values'
  | 'file-download'
  | 'file-delete';

/** One write, control or setting group change as the control log keeps it. */
export type ControlLogRecord = {
  userId: string | null;
  username: string | null;
  action: ControlLogAction;
  reference: string;
  value: unknown;
  outcome: string;
  status: number;
  deviceError: { service: string; error: string; addCause?: string } | null;
  detail: string | null;
};

/** Appends an entry to a connection's control log. */
export async function appendControlLog(db: Queryable, space: string, connectionId: string, r: ControlLogRecord): Promise<void> {
  await db.query(
    `insert into protocol.control_log (space, connection_id, user_id, username, action, reference, value, outcome, status, device_error, detail)
       select $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 where exists (select 1 from protocol.connections where space = $1 and id = $2)`,
    [
      space,
      connectionId,
      r.userId,
      r.username,
      r.action,
      r.reference,
      JSON.stringify(r.value ?? null),
      r.outcome,
      r.status,
      r.deviceError === null ? null : JSON.stringify(r.deviceError),
      r.detail,
    ],
  );
}

/** A page of a connection's control log, newest first, with the total count. */
export async function controlLogPage(
  db: Queryable,
  space: string,
  connectionId: string,
  page: number,
  size: number,
): Promise<{ total: number; entries: (ControlLogRecord & { at: string })[] }> {
  const { rows: count } = await db.query<{ n: string }>(
    'select count(*) as n from protocol.control_log where space = $1 and connection_id = $2',
    [space, connectionId],
  );
  const { rows } = await db.query<Record<string, unknown>>(
    `select at, user_id, username, action, reference, value, outcome, status, device_error, detail from protocol.control_log
      where space = $1 and connection_id = $2 order by at desc, id desc limit $3 offset $4`,
    [space, connectionId, size, page * size],
  );
  return {
    total: Number(count[0]?.n ?? 0),
    entries: rows.map((r) => ({
      at: new Date(r.at as string).toISOString(),
      userId: (r.user_id as string | null) ?? null,
      username: (r.username as string | null) ?? null,
      action: r.action as ControlLogRecord['action'],
      reference: r.reference as string,
      value: r.value ?? null,
      outcome: r.outcome as string,
      status: r.status as number,
      deviceError: (r.device_error as ControlLogRecord['deviceError']) ?? null,
      detail: (r.detail as string | null) ?? null,
    })),
  };
}
