import type { Queryable } from '@scada/platform';

/**
 * A started connection as the supervisor needs it. `linkRevision` counts changes of what its association
 * depends on (address, port, password, TLS): a new one has the holder associate again.
 */
export type StartedConnection = { space: string; id: string; ip: string; port: number; name: string; linkRevision?: number };

/** What the replica holding a session reports about it. */
export type SessionState = {
  state: 'connecting' | 'connected' | 'waiting' | 'stopped';
  since: string;
  lastError: string | null;
  reconnects: number;
  identity: { vendor: string; model: string; revision: string } | null;
  owner: string;
  /** What the session warns about: `model_mismatch`, `buffer_overflow`. */
  warnings: { code: string; detail: string }[];
};

/** How a report block listed in a connection's `enableReports` is kept enabled: with a general interrogation. */
export const startReportOptions = { generalInterrogation: true, triggers: ['dchg', 'qchg', 'gi'] } as const;

/**
 * Marks a connection started or stopped; false when it is not in this space. A connection that was not
 * started before gets the report blocks of its `enableReports` kept enabled (those kept already, with
 * options of their own, stay as they are), before any replica takes its session up.
 */
export async function setStarted(db: Queryable, space: string, id: string, started: boolean): Promise<boolean> {
  const { rows } = await db.query<{ was: boolean; enable_reports: string[] | null }>(
    `update protocol.connections c set started = $3
       from (select started as was from protocol.connections where space = $1 and id = $2 for update) o
      where c.space = $1 and c.id = $2
      returning o.was, c.enable_reports`,
    [space, id, started],
  );
  const row = rows[0];
  if (!row) return false;
  const blocks = row.enable_reports ?? [];
  if (started && !row.was && blocks.length > 0) {
    await db.query(
      `insert into protocol.report_subscriptions (space, connection_id, rcb, options)
         select $1, $2, rcb, $4::jsonb from unnest($3::text[]) as rcb
       on conflict (space, connection_id, rcb) do nothing`,
      [space, id, blocks, JSON.stringify(startReportOptions)],
    );
  }
  return true;
}

/** Every started connection of a site, of every space. */
export async function startedConnections(db: Queryable, site: string): Promise<StartedConnection[]> {
  const { rows } = await db.query<StartedConnection>(
    'select space, id, ip, port, name, link_revision as "linkRevision" from protocol.connections where started and site = $1 order by space, id',
    [site],
  );
  return rows;
}

/**
 * Takes or renews the lease of a connection for `owner`: granted when nobody holds it, when its holder's
 * lease has expired, or when `owner` holds it already. Expiry is judged by the database clock, so replica
 * clocks do not matter. Answers whether `owner` holds it now.
 */
export async function acquireLease(db: Queryable, space: string, id: string, owner: string, ttlMs: number): Promise<boolean> {
  const { rows } = await db.query<{ owner: string }>(
    `insert into protocol.session_leases (space, connection_id, owner, expires_at)
       select $1, $2, $3, now() + make_interval(secs => $4::double precision / 1000)
       where exists (select 1 from protocol.connections where space = $1 and id = $2 and started)
     on conflict (space, connection_id) do update set owner = excluded.owner, expires_at = excluded.expires_at
       where protocol.session_leases.owner = excluded.owner or protocol.session_leases.expires_at < now()
     returning owner`,
    [space, id, owner, ttlMs],
  );
  return rows[0]?.owner === owner;
}

/**
 * Renews every lease `owner` still holds; answers the ids (`space/id`) it holds after the renewal. A lease
 * whose time ran out is still `owner`'s while its row names it: no other replica took it over (taking it
 * over names the new holder), so a renewal that comes late keeps it rather than losing it to its own
 * lateness. Once another replica has taken it, the row names that one and the lease is not renewed here.
 */
export async function renewLeases(db: Queryable, owner: string, ttlMs: number): Promise<Set<string>> {
  const { rows } = await db.query<{ space: string; connection_id: string }>(
    `update protocol.session_leases set expires_at = now() + make_interval(secs => $2::double precision / 1000)
       where owner = $1 returning space, connection_id`,
    [owner, ttlMs],
  );
  return new Set(rows.map((r) => `${r.space}/${r.connection_id}`));
}

/** Gives a lease up (the connection was stopped, or the replica is stopping). */
export async function releaseLease(db: Queryable, space: string, id: string, owner: string): Promise<void> {
  await db.query('delete from protocol.session_leases where space = $1 and connection_id = $2 and owner = $3', [space, id, owner]);
}

/** Whether a connection is in the space, its site and which replica holds its live lease (null: none), in one query. */
export async function connectionHolder(db: Queryable, space: string, id: string): Promise<{ owner: string | null; site: string } | null> {
  const { rows } = await db.query<{ owner: string | null; site: string }>(
    `select l.owner, c.site from protocol.connections c
       left join protocol.session_leases l on l.space = c.space and l.connection_id = c.id and l.expires_at >= now()
      where c.space = $1 and c.id = $2`,
    [space, id],
  );
  return rows[0] ? { owner: rows[0].owner, site: rows[0].site } : null;
}

/** Records what the holding replica knows of a session. */
export async function saveSessionState(db: Queryable, space: string, id: string, s: SessionState): Promise<void> {
  await db.query(
    `insert into protocol.session_states (space, connection_id, owner, state, since, last_error, reconnects, identity, warnings, updated_at)
       select $1, $2, $3, $4, $5, $6, $7, $8, $9, now() where exists (select 1 from protocol.connections where space = $1 and id = $2)
     on conflict (space, connection_id) do update set owner = excluded.owner, state = excluded.state, since = excluded.since,
       last_error = excluded.last_error, reconnects = excluded.reconnects, identity = excluded.identity, warnings = excluded.warnings, updated_at = now()`,
    [
      space,
      id,
      s.owner,
      s.state,
      s.since,
      s.lastError,
      s.reconnects,
      s.identity === null ? null : JSON.stringify(s.identity),
      JSON.stringify(s.warnings),
    ],
  );
}

/** The session as last reported, with whether its reporter still holds the lease. */
export async function readSession(
  db: Queryable,
  space: string,
  id: string,
): Promise<(SessionState & { started: boolean; held: boolean }) | null> {
  const { rows } = await db.query<Record<string, unknown>>(
    `select c.started, s.owner, s.state, s.since, s.last_error, s.reconnects, s.identity, s.warnings,
        (l.owner is not null and l.owner = s.owner and l.expires_at >= now()) as held
       from protocol.connections c
       left join protocol.session_states s on s.space = c.space and s.connection_id = c.id
       left join protocol.session_leases l on l.space = c.space and l.connection_id = c.id
      where c.space = $1 and c.id = $2`,
    [space, id],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    started: r.started as boolean,
    held: Boolean(r.held),
    owner: (r.owner as string | null) ?? '',
    state: ((r.state as string | null) ?? 'stopped') as SessionState['state'],
    since: r.since ? new Date(r.since as string).toISOString() : new Date(0).toISOString(),
    lastError: (r.last_error as string | null) ?? null,
    reconnects: (r.reconnects as number | null) ?? 0,
    identity: (r.identity as SessionState['identity']) ?? null,
    warnings: (r.warnings as SessionState['warnings'] | null) ?? [],
  };
}

/** A connection's session as a live snapshot pages through them, with the replica holding it now (null: none). */
export type SessionPageRow = SessionState & { id: string; started: boolean; held: boolean; holder: string | null };

/**
 * One page of a space's sessions in connection id order: at most `limit` connections (null: all) after
 * `after` (null: from the first), only those of `ids` when given. One query for the page, whatever its size.
 */
export async function sessionPage(
  db: Queryable,
  space: string,
  page: { after: string | null; limit: number | null; ids: string[] | null },
): Promise<SessionPageRow[]> {
  const { rows } = await db.query<Record<string, unknown>>(
    `select c.id, c.started, s.owner, s.state, s.since, s.last_error, s.reconnects, s.identity, s.warnings,
        (l.owner is not null and l.owner = s.owner and l.expires_at >= now()) as held,
        case when l.expires_at >= now() then l.owner end as holder
       from protocol.connections c
       left join protocol.session_states s on s.space = c.space and s.connection_id = c.id
       left join protocol.session_leases l on l.space = c.space and l.connection_id = c.id
      where c.space = $1 and ($2::uuid is null or c.id > $2::uuid) and ($3::uuid[] is null or c.id = any($3::uuid[]))
      order by c.id limit $4`,
    [space, page.after, page.ids, page.limit],
  );
  return rows.map((r) => ({
    id: String(r.id),
    started: r.started as boolean,
    held: Boolean(r.held),
    holder: (r.holder as string | null) ?? null,
    owner: (r.owner as string | null) ?? '',
    state: ((r.state as string | null) ?? 'stopped') as SessionState['state'],
    since: r.since ? new Date(r.since as string).toISOString() : new Date(0).toISOString(),
    lastError: (r.last_error as string | null) ?? null,
    reconnects: (r.reconnects as number | null) ?? 0,
    identity: (r.identity as SessionState['identity']) ?? null,
    warnings: (r.warnings as SessionState['warnings'] | null) ?? [],
  }));
}

/** Report blocks to enable on every (re)connect of a connection. */
export async function reportSubscriptions(
  db: Queryable,
  space: string,
  id: string,
): Promise<{ rcb: string; options: Record<string, unknown> }[]> {
  const { rows } = await db.query<{ rcb: string; options: Record<string, unknown> }>(
    'select rcb, options from protocol.report_subscriptions where space = $1 and connection_id = $2 order by rcb',
    [space, id],
  );
  return rows;
}

/** Adds or replaces a report subscription. */
export async function subscribeReport(
  db: Queryable,
  space: string,
  id: string,
  rcb: string,
  options: Record<string, unknown>,
): Promise<void> {
  await db.query(
    `insert into protocol.report_subscriptions (space, connection_id, rcb, options) values ($1, $2, $3, $4)
     on conflict (space, connection_id, rcb) do update set options = excluded.options`,
    [space, id, rcb, JSON.stringify(options)],
  );
}

/** Removes a report subscription; false when there was none. */
export async function unsubscribeReport(db: Queryable, space: string, id: string, rcb: string): Promise<boolean> {
  const { rowCount } = await db.query('delete from protocol.report_subscriptions where space = $1 and connection_id = $2 and rcb = $3', [
    space,
    id,
    rcb,
  ]);
  return rowCount === 1;
}
