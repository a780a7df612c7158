import { sql, type RawBuilder } from 'kysely';
import type { SqlDialect } from './query-context.ts';

/**
 * Several rows of a subquery as one JSON array value, in the shape of their table, so that a read
 * of a row and its related rows is one statement on either dialect (decision 020). `from` is the
 * subquery aliased `alias`; `columns` the table's columns (SQLite has no `row_to_json`); `order`
 * the columns the array is sorted by. Decode with `jsonValue`.
 *
 * On SQLite this pays for small sets only: folding the turn's 50-message history into the
 * conversation's read this way cost more CPU than the statement it saved (measured, decision 020).
 */
export function jsonArrayOf(
  dialect: SqlDialect,
  from: RawBuilder<unknown>,
  alias: string,
  columns: readonly string[],
  order: readonly string[],
): RawBuilder<unknown> {
  const row = sql.ref(alias);
  const by = sql.join(order.map((column) => sql.ref(`${alias}.${column}`)));
  if (dialect === 'postgres')
    return sql`(select coalesce(json_agg(${row} order by ${by}), '[]'::json) from ${from} ${row})`;
  const ordered = sql`(select * from ${from} ${row} order by ${by})`;
  return sql`(select coalesce(json_group_array(${jsonObject(alias, columns)}), '[]') from ${ordered} ${row})`;
}

/** One row of a subquery as a JSON object (or null), in the shape of its table. */
export function jsonRowOf(
  dialect: SqlDialect,
  from: RawBuilder<unknown>,
  alias: string,
  columns: readonly string[],
): RawBuilder<unknown> {
  const row = sql.ref(alias);
  if (dialect === 'postgres') return sql`(select row_to_json(${row}) from ${from} ${row})`;
  return sql`(select ${jsonObject(alias, columns)} from ${from} ${row})`;
}

function jsonObject(alias: string, columns: readonly string[]): RawBuilder<unknown> {
  return sql`json_object(${sql.join(columns.flatMap((column) => [sql.lit(column), sql.ref(`${alias}.${column}`)]))})`;
}

/** A JSON value as the driver returns it: parsed already (`pg`), or as text (node:sqlite). */
export function jsonValue<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
