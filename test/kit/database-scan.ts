import { sql } from 'kysely';
import type { QueryContext } from '../../src/store/query-context.ts';
import type { Store } from '../../src/store/store.ts';

/**
 * Every table of the database (SQLite's full-text index and its shadow tables included), every
 * row, every column, read as text (blobs byte for byte), case-insensitively: `table → needles found`.
 */
export async function scanDatabase(store: Store, needles: readonly string[]): Promise<Record<string, string[]>> {
  const { db, dialect } = store.extend((ctx: QueryContext) => ctx).ops;
  const tables =
    dialect === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables
          where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db);
  const found: Record<string, string[]> = {};
  for (const { name } of tables.rows) {
    const rows =
      dialect === 'sqlite'
        ? await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(db)
        : await sql<{ row: string }>`select t::text as row from ${sql.table(name)} t`.execute(db);
    const text = rows.rows
      .map((row) => Object.values(row).map(asText).join('\u0000'))
      .join('\n')
      .toLowerCase();
    const hits = needles.filter((needle) => text.includes(needle.toLowerCase()));
    if (hits.length > 0) found[name] = hits;
  }
  return found;
}

const asText = (value: unknown): string =>
  value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : String(value ?? '');
