import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../query-context.ts';

/**
 * SQLite: a deleted message leaves the full-text index (decision 024). FTS5 deletes by writing a
 * delete marker beside the entries, which stay in `messages_fts_data` until segments are merged:
 * a deleted participant's words were still in the file. With `secure-delete` on, a delete removes
 * the entries themselves; `optimize` merges the index once, which drops what earlier deletions left.
 * The setting is kept in the index (FTS5 format 5, SQLite 3.42 or later; node:sqlite has it).
 * PostgreSQL's text-search index is on the messages' own rows: nothing here.
 */
export function ftsSecureDeleteMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'sqlite') return;
      await sql`insert into messages_fts (messages_fts, rank) values ('secure-delete', 1)`.execute(db);
      await sql`insert into messages_fts (messages_fts) values ('optimize')`.execute(db);
    },
  };
}
