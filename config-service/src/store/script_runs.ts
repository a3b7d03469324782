import type { Queryable } from '@scada/platform';

/** How many runs of a script are kept. */
export const keptRuns = 100;

/** One run as it is kept. */
export type RunRecord = {
  space: string;
  scriptId: string;
  startedAt: Date;
  durationMs: number;
  outcome: string;
  trigger: 'schedule' | 'hand';
  by: string;
  error: { name: string; message: string; line: number | null; column: number | null } | null;
  /** Kept only when the script has `log` on. */
  logs: string[] | null;
};

/**
 * Keeps runs, in one statement for all of them, and drops the runs of their scripts past the newest
 * {@link keptRuns}. A run of a script deleted meanwhile is dropped with it.
 */
export async function keepRuns(db: Queryable, runs: readonly RunRecord[]): Promise<void> {
  if (runs.length === 0) return;
  await db.query(
    `insert into config.script_runs (space, script_id, started_at, duration_ms, outcome, trigger, by_whom, error, logs)
       select r.space, r.script_id, r.started_at, r.duration_ms, r.outcome, r.trigger, r.by_whom, r.error, r.logs
         from jsonb_to_recordset($1::jsonb) as r(space text, script_id uuid, started_at timestamptz, duration_ms double precision,
                                                  outcome text, trigger text, by_whom text, error jsonb, logs jsonb)
        where exists (select 1 from config.scripts s where s.space = r.space and s.id = r.script_id)`,
    [
      JSON.stringify(
        runs.map((r) => ({
          space: r.space,
          script_id: r.scriptId,
          started_at: r.startedAt.toISOString(),
          duration_ms: r.durationMs,
          outcome: r.outcome,
          trigger: r.trigger,
          by_whom: r.by,
          error: r.error,
          logs: r.logs,
        })),
      ),
    ],
  );
  const scripts = [...new Map(runs.map((r) => [`${r.space}/${r.scriptId}`, r])).values()];
  await db.query(
    `delete from config.script_runs d using (
         select space, script_id, id, row_number() over (partition by space, script_id order by started_at desc, id desc) as n
           from config.script_runs
          where (space, script_id) in (select * from unnest($1::text[], $2::uuid[]))
       ) old
      where old.n > ${keptRuns} and d.space = old.space and d.script_id = old.script_id and d.id = old.id`,
    [scripts.map((r) => r.space), scripts.map((r) => r.scriptId)],
  );
}

/** The newest runs of a script, newest first. */
export async function lastRuns(db: Queryable, space: string, scriptId: string, limit: number): Promise<RunRecord[]> {
  const { rows } = await db.query(
    `select started_at, duration_ms, outcome, trigger, by_whom, error, logs from config.script_runs
      where space = $1 and script_id = $2 order by started_at desc, id desc limit $3`,
    [space, scriptId, limit],
  );
  return rows.map((r) => ({
    space,
    scriptId,
    startedAt: new Date(r.started_at as string),
    durationMs: Number(r.duration_ms),
    outcome: r.outcome as string,
    trigger: r.trigger as RunRecord['trigger'],
    by: r.by_whom as string,
    error: (r.error as RunRecord['error']) ?? null,
    logs: (r.logs as string[] | null) ?? null,
  }));
}

/** The state a script left, or null. */
export async function loadState(db: Queryable, space: string, scriptId: string): Promise<string | null> {
  const { rows } = await db.query<{ state: string }>('select state from config.script_states where space = $1 and script_id = $2', [
    space,
    scriptId,
  ]);
  return rows[0]?.state ?? null;
}

/** Keeps the state a run left (null: none). */
export async function saveState(db: Queryable, space: string, scriptId: string, state: string | null): Promise<void> {
  if (state === null) {
    await db.query('delete from config.script_states where space = $1 and script_id = $2', [space, scriptId]);
    return;
  }
  await db.query(
    `insert into config.script_states (space, script_id, state)
       select $1, $2, $3 where exists (select 1 from config.scripts where space = $1 and id = $2)
     on conflict (space, script_id) do update set state = excluded.state, updated_at = now()`,
    [space, scriptId, state],
  );
}
