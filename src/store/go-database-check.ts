import { existsSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { sql, type Kysely } from 'kysely';
import { MIGRATION_TABLE } from './migrate.ts';
import type { Database } from './schema.ts';

/** Start-up refused: `DATABASE_URL` names the Go PromptPipe's own database. */
export class GoDatabaseError extends Error {
  override readonly name = 'GoDatabaseError';
}

/**
 * A Go PromptPipe database (its tables there, none of ours) is refused before anything is
 * written to it: our migrations would fail half-way on its `flow_states`, and its data belongs in
 * a database of our own, brought over by the importer.
 */
function refuseGoTables(tables: ReadonlySet<string>): void {
  if (tables.has('conversation_participants') && tables.has('flow_states') && !tables.has(MIGRATION_TABLE))
    throw new GoDatabaseError(
      'DATABASE_URL is a Go PromptPipe database (its conversation_participants and flow_states, none of our ' +
        'tables): point DATABASE_URL at a new database, then bring the study over with ' +
        'npm run import:go -- --from <this database>',
    );
}

/** SQLite: looked at read-only, before the store's own connection sets its pragmas (WAL) on the file. */
export function refuseGoSqliteFile(path: string): void {
  if (path === ':memory:' || !existsSync(path)) return;
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    const rows = database.prepare(`select name from sqlite_master where type = 'table'`).all();
    refuseGoTables(new Set(rows.map((row) => String(row.name))));
  } finally {
    database.close();
  }
}

/** PostgreSQL: the tables of the store's schema. */
export async function refuseGoPostgresSchema(db: Kysely<Database>, schema: string): Promise<void> {
  const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables
    where table_schema = ${schema}`.execute(db);
  refuseGoTables(new Set(rows.map((row) => row.name)));
}
