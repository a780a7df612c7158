import { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { participant } from './store-fixtures.ts';

// The group commit runs BEGIN straight on the connection (decision 020); refused for a lock
// another process holds, it must still take the driver's way: retried without blocking.
describe('a SQLite transaction while another process holds the lock', () => {
  it('waits without blocking the event loop, then commits once the lock is let go', async () => {
    const url = tempSqliteUrl();
    const store = await openStore(url, { busyTimeoutMs: 10_000 });
    const other = new DatabaseSync(url.slice('sqlite:'.length));
    try {
      other.exec('BEGIN EXCLUSIVE');
      const person = participant();
      let settled = false;
      const writing = store.transaction((tx) => tx.insertParticipant(person)).finally(() => (settled = true));
      const started = performance.now();
      for (let i = 0; i < 10; i++) await sleep(10); // timers still fire: nothing holds the thread
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(settled).toBe(false);
      other.exec('ROLLBACK');
      await writing;
      expect(await store.getParticipant(person.id)).toMatchObject({ id: person.id });
    } finally {
      other.close();
      await store.close();
    }
  });
});
