import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { openNodeSqlite } from '../../src/store/sqlite-database.ts';
import { migrateUpTo } from './migration-kit.ts';

const tempDir = mkdtempSync(join(tmpdir(), 'promptpipe-migration-016-'));
afterAll(() => rmSync(tempDir, { recursive: true, force: true }));

describe('migration 016 (person memory)', () => {
  it("makes a participant's existing notes theirs; a web session's stay its own", async () => {
    const path = join(tempDir, 'store.sqlite');
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: openNodeSqlite(path) }) });
    await migrateUpTo(db, 'sqlite', '014_session_callers');
    await sql`insert into participants (id, phone_number, status, debug, enrolled_at, created_at, updated_at)
      values ('p_1', '+14165550101', 'active', 0, 0, 0, 0)`.execute(db);
    await sql`insert into conversations (id, participant_id, channel, flow, state, version, created_at, updated_at)
      values ('c_1', 'p_1', 'webhook', 'assistant', 'ACTIVE', 1, 0, 0),
             ('c_web', null, 'web', 'assistant', 'ACTIVE', 1, 0, 0)`.execute(db);
    await sql`insert into assistant_notes (id, conversation_id, text, created_at)
      values ('n_1', 'c_1', 'theirs', 0), ('n_2', 'c_web', 'the session''s', 1)`.execute(db);
    await db.destroy();

    const store = await openStore(`sqlite:${path}`);
    try {
      expect((await store.listNotes({ conversationId: 'c_other', person: 'p_1' })).map((n) => n.text)).toEqual([
        'theirs',
      ]);
      expect((await store.listNotes({ conversationId: 'c_web', person: null })).map((n) => n.text)).toEqual([
        "the session's",
      ]);
    } finally {
      await store.close();
    }
  });
});
