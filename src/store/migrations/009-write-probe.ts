import type { Kysely, Migration } from 'kysely';

/**
 * A table nothing else uses, for `/health`'s write probe on SQLite: a row written and deleted in
 * one transaction tells whether the file can still grow (a full disk) without touching real data.
 */
export function writeProbeMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('write_probes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('filler', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
