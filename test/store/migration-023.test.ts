import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { openNodeSqlite } from '../../src/store/sqlite-database.ts';
import { migrateUpTo } from './migration-kit.ts';

describe('migration 023: event pages may be version 2', () => {
  it('makes a server from before it refuse the database instead of misreading its event pages', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'promptpipe-migration-023-')), 'store.sqlite');
    const store = await openStore(`sqlite:${path}`);
    await store.close();
    // What the migrator of a version that knows migrations up to 022 does with this database.
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: openNodeSqlite(path) }) });
    await expect(migrateUpTo(db, 'sqlite', '022_event_pages')).rejects.toThrow(/023_event_pages_v2/);
    await db.destroy();
  });
});
