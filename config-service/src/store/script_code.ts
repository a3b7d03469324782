import type { Queryable } from '@scada/platform';
import type { Audit } from './entity_table.ts';

/**
 * Replaces the code of a script of the space, as UTF-8 bytes exactly as given. False when the space holds
 * no script with that id.
 */
export async function updateScriptCode(db: Queryable, space: string, id: string, code: string, audit: Audit): Promise<boolean> {
  const result = await db.query(
    'update config.scripts set code = $3, last_modified_by = $4, last_modified_date = $5 where space = $1 and id = $2',
    [space, id, Buffer.from(code, 'utf8'), audit.actor, audit.at],
  );
  return result.rowCount > 0;
}
