/**
 * What the replica holding a connection has delivered, kept so that whichever replica holds it next
 * resumes there: per buffered report block the EntryID of the last entry delivered, and the last value of
 * every reported attribute, each with the device it came from. Written in batches of many connections at
 * once (`sessions/delivery_journal.ts`), and only for the connections whose lease the writer holds at that
 * moment, so a replica that lost a connection never moves its place on.
 */
import type { Queryable } from '@scada/platform';

/** A kept value as stored: the reported attribute without `stale`, with the block that reported it. */
export type StoredValue = { reference: string; rcb: string } & Record<string, unknown>;

/** One connection's changes in a batch: EntryIDs by block and values by reference, from `device`. */
export type DeliveryChanges = {
  space: string;
  id: string;
  device: string;
  positions: Record<string, string>;
  values: Record<string, StoredValue>;
};

/** What was delivered on a connection, and the device it came from (null: nothing kept). */
export type Delivered = { device: string | null; positions: Map<string, string>; values: StoredValue[] };

/**
 * Stores a batch in one statement, for the connections whose live lease `owner` holds; answers those
 * (`space/id`). The others' changes are not written.
 */
export async function saveDeliveries(db: Queryable, owner: string, batch: DeliveryChanges[]): Promise<Set<string>> {
  const { rows } = await db.query<{ space: string; id: string }>(
    `with batch as (
       select * from jsonb_to_recordset($2::jsonb) as b(space text, id uuid, device text, positions jsonb, vals jsonb)
     ), held as (
       select b.* from batch b
         join protocol.session_leases l on l.space = b.space and l.connection_id = b.id and l.owner = $1 and l.expires_at >= now()
     ), positions as (
       insert into protocol.report_positions (space, connection_id, rcb, entry_id, device)
         select h.space, h.id, p.key, p.value #>> '{}', h.device from held h, jsonb_each(h.positions) p
       on conflict (space, connection_id, rcb) do update set entry_id = excluded.entry_id, device = excluded.device
     ), vals as (
       insert into protocol.last_values (space, connection_id, reference, rcb, value, device)
         select h.space, h.id, v.key, v.value ->> 'rcb', v.value, h.device from held h, jsonb_each(h.vals) v
       on conflict (space, connection_id, reference) do update set rcb = excluded.rcb, value = excluded.value, device = excluded.device
     )
     select space, id::text as id from held`,
    [owner, JSON.stringify(batch.map((c) => ({ space: c.space, id: c.id, device: c.device, positions: c.positions, vals: c.values })))],
  );
  return new Set(rows.map((r) => `${r.space}/${r.id}`));
}

/** What was delivered on a connection. */
export async function readDeliveries(db: Queryable, space: string, id: string): Promise<Delivered> {
  const { rows } = await db.query<{ kind: string; key: string; entry_id: string | null; value: StoredValue | null; device: string }>(
    `select 'position' as kind, rcb as key, entry_id, null::jsonb as value, device
       from protocol.report_positions where space = $1 and connection_id = $2
     union all
     select 'value', reference, null, value, device from protocol.last_values where space = $1 and connection_id = $2`,
    [space, id],
  );
  const positions = new Map(rows.flatMap((r) => (r.kind === 'position' && r.entry_id !== null ? [[r.key, r.entry_id] as const] : [])));
  const values = rows.flatMap((r) => (r.kind === 'value' && r.value !== null ? [r.value] : []));
  return { device: rows[0]?.device ?? null, positions, values };
}

/** Forgets a block's place and values (it was disabled); every block's when `rcb` is null (another device). */
export async function forgetDeliveries(db: Queryable, space: string, id: string, rcb: string | null): Promise<void> {
  await db.query(
    `with positions as (
       delete from protocol.report_positions where space = $1 and connection_id = $2 and ($3::text is null or rcb = $3)
     )
     delete from protocol.last_values where space = $1 and connection_id = $2 and ($3::text is null or rcb = $3)`,
    [space, id, rcb],
  );
}
