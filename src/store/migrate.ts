import { Migrator, sql, type Kysely } from 'kysely';
import { allMigrations } from './migrations/index.ts';
import type { SqlDialect } from './query-context.ts';
import type { Database } from './schema.ts';

export const MIGRATION_TABLE = 'migrations';
export const MIGRATION_LOCK_TABLE = 'migrations_lock';

export interface MigrationLogger {
  info(obj: object, msg?: string): void;
}

/**
 * Applies pending migrations in order, recording each in the `migrations` table. Kysely's
 * Migrator holds a lock row while it runs, so two processes opening one database apply each
 * migration once. On PostgreSQL the bookkeeping tables are pinned to the store's schema (the
 * Migrator would otherwise look for them in every schema). Kysely runs SQLite migrations outside
 * a transaction and without a lock, so there the whole run is wrapped in `BEGIN IMMEDIATE`: a
 * failed migration leaves nothing half-applied and a second process waits, then finds it done.
 */
export async function migrateToLatest(
  db: Kysely<Database>,
  dialect: SqlDialect,
  options: { schema?: string; logger?: MigrationLogger } = {},
): Promise<string[]> {
  if (dialect === 'postgres') return runMigrator(db, dialect, options);
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      const applied = await runMigrator(connection, dialect, options);
      await sql`commit`.execute(connection);
      return applied;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}

async function runMigrator(
  db: Kysely<Database>,
  dialect: SqlDialect,
  options: { schema?: string; logger?: MigrationLogger } = {},
): Promise<string[]> {
  const migrations = allMigrations(dialect);
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    ...(dialect === 'postgres' && options.schema ? { migrationTableSchema: options.schema } : {}),
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  const applied = results.filter((result) => result.status === 'Success').map((result) => result.migrationName);
  if (error) {
    const failed = results.find((result) => result.status === 'Error')?.migrationName;
    throw new Error(
      `database migration ${failed ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`.replace(
        '  ',
        ' ',
      ),
      {
        cause: error,
      },
    );
  }
  for (const name of applied) options.logger?.info({ migration: name }, 'applied database migration');
  return applied;
}
