import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { MIGRATION_LOCK_TABLE, MIGRATION_TABLE } from '../../src/store/migrate.ts';
import { allMigrations } from '../../src/store/migrations/index.ts';
import { createPgPool } from '../../src/store/open-store.ts';
import type { SqlDialect } from '../../src/store/query-context.ts';
import { openNodeSqlite } from '../../src/store/sqlite-database.ts';
import { PG_URL } from '../kit/requirements.ts';

/** Migrates a database up to (and including) `last`, as a server of that version left it. */
export async function migrateUpTo(db: Kysely<unknown>, dialect: SqlDialect, last: string, schema?: string) {
  const migrations = Object.fromEntries(Object.entries(allMigrations(dialect)).filter(([name]) => name <= last));
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: MIGRATION_LOCK_TABLE,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

export interface OldDatabase {
  name: string;
  dialect: SqlDialect;
  /** Makes the database as version `last` left it, seeded; answers the URL to open it with. */
  prepare: () => Promise<string>;
}

/**
 * A SQLite file in `tempDir` and a PostgreSQL schema `pgSchema` (created here, dropped by the
 * caller), each migrated up to `last` and seeded by `seed` with SQL of that version.
 */
export function oldDatabases(
  last: string,
  seed: (db: Kysely<unknown>) => Promise<void>,
  { tempDir, pgSchema }: { tempDir: string; pgSchema: string },
): OldDatabase[] {
  const prepared = async (db: Kysely<unknown>, dialect: SqlDialect, schema?: string) => {
    await migrateUpTo(db, dialect, last, schema);
    await seed(db);
    await db.destroy();
  };
  return [
    {
      name: 'SQLite file',
      dialect: 'sqlite',
      prepare: async () => {
        const path = join(tempDir, 'store.sqlite');
        await prepared(new Kysely({ dialect: new SqliteDialect({ database: openNodeSqlite(path) }) }), 'sqlite');
        return `sqlite:${path}`;
      },
    },
    {
      name: 'PostgreSQL',
      dialect: 'postgres',
      prepare: async () => {
        const admin = new pg.Client({ connectionString: PG_URL });
        await admin.connect();
        await admin.query(`create schema "${pgSchema}"`);
        await admin.end();
        const pool = createPgPool(PG_URL, pgSchema);
        await prepared(new Kysely({ dialect: new PostgresDialect({ pool }) }), 'postgres', pgSchema);
        return PG_URL;
      },
    },
  ];
}

/** A temporary directory and a PostgreSQL schema name for `oldDatabases`, both removed after the file's tests. */
export function oldDatabasePlaces(label: string): { tempDir: string; pgSchema: string } {
  const pgSchema = `${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const tempDir = mkdtempSync(join(tmpdir(), `promptpipe-${label}-`));
  afterAll(async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`drop schema if exists "${pgSchema}" cascade`);
    await admin.end();
    rmSync(tempDir, { recursive: true, force: true });
  });
  return { tempDir, pgSchema };
}
