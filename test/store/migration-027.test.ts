import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { openNodeSqlite } from '../../src/store/sqlite-database.ts';
import { migrateUpTo } from './migration-kit.ts';

const tempDir = mkdtempSync(join(tmpdir(), 'promptpipe-migration-027-'));
afterAll(() => rmSync(tempDir, { recursive: true, force: true }));

/** Index pages (`messages_fts_data`) holding `word`, as FTS5 stores terms: lower case, byte for byte. */
const pagesWith = async (db: Kysely<unknown>, word: string) =>
  (
    await sql<{ n: number }>`select count(*) as n from messages_fts_data
      where instr(block, cast(${word} as blob)) > 0`.execute(db)
  ).rows[0]!.n;

describe('migration 027 (full-text secure delete, SQLite)', () => {
  it('drops from the index the words of conversations deleted before it, and of those deleted after', async () => {
    const path = join(tempDir, 'store.sqlite');
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: openNodeSqlite(path) }) });
    await migrateUpTo(db, 'sqlite', '026_ticket_contact');
    await sql`insert into conversations (id, participant_id, channel, flow, state, version, created_at, updated_at)
      values ('c_gone', null, 'web', 'assistant', 'ACTIVE', 1, 0, 0),
             ('c_kept', null, 'web', 'assistant', 'ACTIVE', 1, 0, 0),
             ('c_later', null, 'web', 'assistant', 'ACTIVE', 1, 0, 0)`.execute(db);
    await sql`insert into messages (conversation_id, seq, id, role, kind, text, source, created_at)
      values ('c_gone', 1, 'm_1', 'user', 'text', 'the zorbleflax is mine', 'participant', 0),
             ('c_kept', 1, 'm_2', 'user', 'text', 'a vimbrantle of my own', 'participant', 0),
             ('c_later', 1, 'm_3', 'user', 'text', 'my quindlewort', 'participant', 0)`.execute(db);
    await sql`delete from conversations where id = 'c_gone'`.execute(db);
    // Version 026 left a deleted message's words in the index's pages.
    expect(await pagesWith(db, 'zorbleflax')).toBeGreaterThan(0);
    await db.destroy();

    const store = await openStore(`sqlite:${path}`);
    await store.close();
    const after = new Kysely<unknown>({ dialect: new SqliteDialect({ database: openNodeSqlite(path) }) });
    try {
      expect(await pagesWith(after, 'zorbleflax')).toBe(0);
      await sql`delete from conversations where id = 'c_later'`.execute(after);
      expect(await pagesWith(after, 'quindlewort')).toBe(0);
      // What stays is found as before.
      const found = await sql<{ conversation_id: string }>`select conversation_id from messages_fts
        where messages_fts match 'vimbrantle'`.execute(after);
      expect(found.rows).toEqual([{ conversation_id: 'c_kept' }]);
    } finally {
      await after.destroy();
    }
  });
});
