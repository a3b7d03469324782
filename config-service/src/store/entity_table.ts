import { ProblemError } from '@scada/contracts';
import { ConstraintViolation, type ConstraintKind, type Queryable } from '@scada/platform';

/**
 * How one field of an entity is kept in a column; codecs convert where JSON and SQL differ, and `read`
 * is the SQL that reads the column when the store can give the field's JSON form itself.
 */
export type Column = {
  field: string;
  column: string;
  toDb?: (value: unknown) => unknown;
  fromDb?: (value: unknown) => unknown;
  read?: string;
};

/** A parent an entity points at: the path it hangs under, or a reference in its body. */
export type ParentRef = { field: string; column: string; label: string; table: string };

/** Children that keep a parent from being deleted. */
export type ChildRef = { table: string; column: string; label: string; plural: string };

/** Where an entity is stored and how it relates to others. */
export type TableSpec = {
  table: string;
  label: string;
  /** Data columns, audit fields and id aside. */
  columns: Column[];
  /** The parent in the request path: every statement is bounded by it too. */
  scope?: ParentRef;
  /** A parent named in the body (its column is among `columns`). */
  reference?: ParentRef;
  /** The list order, in SQL. */
  orderBy: string;
  children?: ChildRef[];
};

/** Who changes a row, and when: set by the service, never by the client. */
export type Audit = { actor: string; at: Date };

/** A row as the API shows it; fields that are null in the store are left out. */
export type Entity = Record<string, unknown> & { id: string };

/**
 * A `timestamptz` column read as the text `Date.toISOString` writes (UTC, milliseconds, truncated as a
 * `Date` truncates microseconds), for the years 1000 to 9999. The audit times come from the service's
 * clock: read this way, a 100-row list no longer parses 200 timestamps into dates and writes them out
 * again, which was a sixth of its CPU.
 */
function isoText(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

const auditColumns: Column[] = [
  { field: 'createdBy', column: 'created_by' },
  { field: 'creationDate', column: 'creation_date', read: isoText('creation_date') },
  { field: 'lastModifiedBy', column: 'last_modified_by' },
  { field: 'lastModifiedDate', column: 'last_modified_date', read: isoText('last_modified_date') },
];

/** A timestamp column as ISO 8601 text, whichever driver read it. */
export function isoDate(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

/**
 * The SQL of one entity. Every statement is bounded by the space (`where space = $1 …`), and by the parent
 * in the path when there is one, so a row of another space is never read, changed or deleted whatever id
 * is asked for. Store errors become problems: a duplicate name 409, a missing parent 404, a parent with
 * children 409 naming them.
 */
export function entityTable(spec: TableSpec) {
  const read: Column[] = [
    { field: 'id', column: 'id' },
    ...(spec.scope ? [{ field: spec.scope.field, column: spec.scope.column }] : []),
    ...spec.columns,
    ...auditColumns,
  ];
  const selectList = read.map((c) => (c.read ? `${c.read} as ${c.column}` : c.column)).join(', ');
  const scopeSql = (n: number) => (spec.scope ? ` and ${spec.scope.column} = $${n}` : '');

  // The columns as three arrays walked by index: a 100-row list makes a hundred entities.
  const fields = read.map((c) => c.field);
  const columns = read.map((c) => c.column);
  const decoders = read.map((c) => c.fromDb);
  const toEntity = (row: Record<string, unknown>): Entity => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) {
      const value = row[columns[i] as string];
      if (value === null || value === undefined) continue;
      const decode = decoders[i];
      out[fields[i] as string] = decode ? decode(value) : value;
    }
    return out as Entity;
  };
  const valuesOf = (body: Record<string, unknown>) =>
    spec.columns.map((c) => {
      const value = body[c.field] ?? null;
      return value !== null && c.toDb ? c.toDb(value) : value;
    });

  return {
    spec,

    /** Every row of the space (under the parent), in list order. */
    async list(db: Queryable, space: string, parentId?: string): Promise<Entity[]> {
      const { rows } = await db.query(
        `select ${selectList} from ${spec.table} where space = $1${scopeSql(2)} order by ${spec.orderBy}`,
        spec.scope ? [space, parentId] : [space],
      );
      return rows.map(toEntity);
    },

    /** Rows of the space whose fields equal the values given (a list: any of its values), in list order. */
    async listWhere(db: Queryable, space: string, where: Record<string, unknown>): Promise<Entity[]> {
      const params: unknown[] = [space];
      const terms = Object.entries(where).map(([field, value]) => {
        const column = read.find((c) => c.field === field)?.column;
        if (!column) throw new Error(`${spec.table} has no field ${field}`);
        params.push(value);
        return Array.isArray(value) ? `${column} = any($${params.length})` : `${column} = $${params.length}`;
      });
      const { rows } = await db.query(
        `select ${selectList} from ${spec.table} where space = $1${terms.map((t) => ` and ${t}`).join('')} order by ${spec.orderBy}`,
        params,
      );
      return rows.map(toEntity);
    },

    /**
     * Deletes every row named, or none: answers the ids the space holds no row for, and then deletes
     * nothing. Run it in a transaction, so that the check and the deletion see the same rows.
     */
    async removeAll(db: Queryable, space: string, ids: readonly string[]): Promise<string[]> {
      const { rows } = await db.query<{ id: string }>(`select id from ${spec.table} where space = $1 and id = any($2) for update`, [
        space,
        ids,
      ]);
      const found = new Set(rows.map((r) => String(r.id)));
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length === 0) await db.query(`delete from ${spec.table} where space = $1 and id = any($2)`, [space, ids]);
      return missing;
    },

    /** One row, or null when the space (and parent) holds none with that id. */
    async get(db: Queryable, space: string, id: string, parentId?: string): Promise<Entity | null> {
      const { rows } = await db.query(
        `select ${selectList} from ${spec.table} where space = $1 and id = $2${scopeSql(3)}`,
        spec.scope ? [space, id, parentId] : [space, id],
      );
      return rows[0] ? toEntity(rows[0]) : null;
    },

    /** True when the space holds a row with that id (and parent). */
    async exists(db: Queryable, space: string, id: string, parentId?: string): Promise<boolean> {
      const { rows } = await db.query(
        `select 1 from ${spec.table} where space = $1 and id = $2${scopeSql(3)}`,
        spec.scope ? [space, id, parentId] : [space, id],
      );
      return rows.length > 0;
    },

    /** Stores a new row; its parents must be rows of the same space. */
    async insert(
      db: Queryable,
      space: string,
      id: string,
      body: Record<string, unknown>,
      audit: Audit,
      parentId?: string,
    ): Promise<Entity> {
      const columns = ['space', 'id', ...(spec.scope ? [spec.scope.column] : []), ...spec.columns.map((c) => c.column)];
      const params = [space, id, ...(spec.scope ? [parentId] : []), ...valuesOf(body)];
      const a = params.length + 1;
      const sql =
        `insert into ${spec.table} (${columns.join(', ')}, created_by, creation_date, last_modified_by, last_modified_date) ` +
        `values (${params.map((_, i) => `$${i + 1}`).join(', ')}, $${a}, $${a + 1}, $${a}, $${a + 1}) returning ${selectList}`;
      try {
        const { rows } = await db.query(sql, [...params, audit.actor, audit.at]);
        return toEntity(rows[0] as Record<string, unknown>);
      } catch (err) {
        throw writeProblem(spec, err, body, parentId);
      }
    },

    /** Replaces a row's fields; false when the space (and parent) holds no row with that id. */
    async update(
      db: Queryable,
      space: string,
      id: string,
      body: Record<string, unknown>,
      audit: Audit,
      parentId?: string,
    ): Promise<boolean> {
      const values = valuesOf(body);
      const sets = spec.columns.map((c, i) => `${c.column} = $${i + 3}`);
      const a = values.length + 3;
      const sql =
        `update ${spec.table} set ${sets.join(', ')}, last_modified_by = $${a}, last_modified_date = $${a + 1} ` +
        `where space = $1 and id = $2${scopeSql(a + 2)}`;
      try {
        const result = await db.query(sql, [space, id, ...values, audit.actor, audit.at, ...(spec.scope ? [parentId] : [])]);
        return result.rowCount > 0;
      } catch (err) {
        throw writeProblem(spec, err, body, parentId);
      }
    },

    /** Deletes a row; false when there is none; 409 naming the children while it has some. */
    async remove(db: Queryable, space: string, id: string, parentId?: string): Promise<boolean> {
      try {
        const result = await db.query(
          `delete from ${spec.table} where space = $1 and id = $2${scopeSql(3)}`,
          spec.scope ? [space, id, parentId] : [space, id],
        );
        return result.rowCount > 0;
      } catch (err) {
        if (!broke(err, 'foreign_key')) throw err;
        throw await childrenProblem(db, spec, space, id);
      }
    },
  };
}

/** The SQL of one entity, as {@link entityTable} builds it. */
export type EntityTable = ReturnType<typeof entityTable>;

/** True when `err` is the store's answer to a broken constraint of that kind. */
function broke(err: unknown, kind: ConstraintKind): boolean {
  return err instanceof ConstraintViolation && err.kind === kind;
}

/** A failed insert or update as the client should see it; anything unexpected passes through. */
function writeProblem(spec: TableSpec, err: unknown, body: Record<string, unknown>, parentId?: string): unknown {
  if (broke(err, 'unique')) {
    const where = spec.scope ? `this ${spec.scope.label}` : spec.reference ? `this ${spec.reference.label}` : 'this space';
    return new ProblemError('conflict', `A ${spec.label} named "${String(body.name)}" already exists in ${where}`, { cause: err });
  }
  if (broke(err, 'foreign_key')) {
    const parent = spec.scope ?? spec.reference;
    const parentIdValue = spec.scope ? parentId : spec.reference ? body[spec.reference.field] : undefined;
    return new ProblemError('not_found', `No ${parent?.label ?? 'parent'} ${String(parentIdValue)} in this space`, { cause: err });
  }
  return err;
}

/** 409 naming the children that keep a row from being deleted (up to ten names of each kind). */
async function childrenProblem(db: Queryable, spec: TableSpec, space: string, id: string): Promise<ProblemError> {
  const children: { entity: string; count: number; names: string[] }[] = [];
  for (const child of spec.children ?? []) {
    const { rows } = await db.query<{ n: number; names: string[] | null }>(
      `select count(*)::int as n, (array_agg(name order by name collate "C"))[1:10] as names ` +
        `from ${child.table} where space = $1 and ${child.column} = $2`,
      [space, id],
    );
    const n = Number(rows[0]?.n ?? 0);
    if (n > 0) children.push({ entity: child.label, count: n, names: rows[0]?.names ?? [] });
  }
  const said = children.map(
    (c) =>
      `${c.count} ${c.count === 1 ? c.entity : pluralOf(spec, c.entity)} (${c.names.join(', ')}${c.count > c.names.length ? ', …' : ''})`,
  );
  const detail =
    said.length > 0
      ? `The ${spec.label} still has ${said.join(' and ')}; delete them first`
      : `The ${spec.label} still has children; delete them first`;
  return new ProblemError('conflict', detail, { extensions: { children } });
}

function pluralOf(spec: TableSpec, label: string): string {
  return spec.children?.find((c) => c.label === label)?.plural ?? `${label}s`;
}
