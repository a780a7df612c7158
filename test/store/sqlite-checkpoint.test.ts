import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatabaseSync } from 'node:sqlite';
import type { CheckpointOptions } from '../../src/store/sqlite-checkpointer.ts';
import { openNodeSqlite, SQLITE_PAGE_SIZE } from '../../src/store/sqlite-database.ts';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

/** What the store's own writes do when the RESTART holds the write lock (`SqliteFaults`): try again shortly. */
async function busyRetried(write: () => unknown): Promise<void> {
  for (;;) {
    try {
      write();
      return;
    } catch (error) {
      if (!/database is locked/.test(String(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
}

const size = (path: string) => statSync(path, { throwIfNoEntry: false })?.size ?? 0;

describe('SQLite checkpoints', () => {
  it(
    'are never run by a commit: a worker copies the WAL into the database file, and close leaves no WAL ' + 'behind',
    async () => {
      const path = tempSqliteUrl().slice('sqlite:'.length);
      const database = openNodeSqlite(path);
      try {
        expect(database.prepare('PRAGMA wal_autocheckpoint').all([])).toEqual([{ wal_autocheckpoint: 0 }]);
        database.prepare('create table t (id integer primary key, body text not null)').run([]);
        const insert = database.prepare('insert into t (body) values (?)');
        // Far more than the 1000 pages at which a commit would checkpoint by default.
        for (let i = 0; i < 3000; i++) insert.run(['x'.repeat(4000)]);
        await waitFor(() => size(path) > 3000 * 4000, { what: 'the rows checkpointed into the database file' });
      } finally {
        await database.close();
      }
      expect(existsSync(`${path}-wal`)).toBe(false);
    },
  );

  it('keep a script alive until the store is closed: closing is the last thing it may await', () => {
    const script = join(mkdtempSync(join(tmpdir(), 'checkpointer-')), 'close.ts');
    const openStore = resolve('src/store/open-store.ts');
    writeFileSync(
      script,
      `import { openStore } from ${JSON.stringify(openStore)};\n` +
        `const store = await openStore(${JSON.stringify(tempSqliteUrl())});\n` +
        "await store.close();\nconsole.log('closed');\n",
    );
    // An unsettled top-level await (the worker no longer holding the event loop) exits with 13.
    const output = execFileSync(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', '--experimental-strip-types', script],
      { encoding: 'utf8' },
    );
    expect(output.trim()).toBe('closed');
  });

  it('let the WAL start over under a steady stream of commits, past its limit', async () => {
    const wal = async (checkpoint: CheckpointOptions) => {
      const path = tempSqliteUrl().slice('sqlite:'.length);
      const database = openNodeSqlite(path, checkpoint);
      try {
        database.prepare('create table t (id integer primary key, body text not null)').run([]);
        const insert = database.prepare('insert into t (body) values (?)');
        let largest = 0;
        // About 24 MB of commits, never more than a few ms apart: the worker rarely finds the WAL idle.
        for (let batch = 0; batch < 150; batch++) {
          for (let i = 0; i < 40; i++) await busyRetried(() => insert.run(['x'.repeat(4000)]));
          largest = Math.max(largest, size(`${path}-wal`));
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        return largest;
      } finally {
        await database.close();
      }
    };
    // The baseline is a WAL that is never checkpointed: every commit's frames, ~37 MB. PASSIVE
    // checkpoints alone come near it on a quiet machine, but on a busy one they sometimes find the
    // WAL idle and let it start over, so they make a baseline that moves with the load.
    const everyFrame = await wal({ intervalMs: 3_600_000, restartFrames: Number.MAX_SAFE_INTEGER });
    expect(everyFrame).toBeGreaterThan(30 * 2 ** 20);
    expect(await wal({ intervalMs: 5, restartFrames: 256 })).toBeLessThan(everyFrame / 2);
  });
});

describe('A SQLite database file', () => {
  it('is made with small pages when new; an existing one keeps the page size it was made with', async () => {
    const pageSize = (database: { prepare(sql: string): { all(parameters: unknown[]): unknown[] } }) =>
      database.prepare('PRAGMA page_size').all([]);
    const fresh = openNodeSqlite(tempSqliteUrl().slice('sqlite:'.length));
    try {
      expect(pageSize(fresh)).toEqual([{ page_size: SQLITE_PAGE_SIZE }]);
    } finally {
      await fresh.close();
    }
    const path = tempSqliteUrl().slice('sqlite:'.length);
    const made = new DatabaseSync(path);
    made.exec('PRAGMA page_size = 4096; create table t (id integer primary key, body text not null)');
    made.close();
    const existing = openNodeSqlite(path);
    try {
      expect(pageSize(existing)).toEqual([{ page_size: 4096 }]);
      existing.prepare('insert into t (body) values (?)').run(['still written']);
      expect(existing.prepare('select body from t').all([])).toEqual([{ body: 'still written' }]);
    } finally {
      await existing.close();
    }
  });
});
