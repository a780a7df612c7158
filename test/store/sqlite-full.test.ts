import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { at, participant } from './store-fixtures.ts';

describe('a full SQLite disk', () => {
  it(
    'is reported by ping until a write that needs a new page succeeds, however many small writes fit ' + 'meanwhile',
    async () => {
      let exec: (sqlText: string) => void = () => undefined;
      const store = await openStore(tempSqliteUrl(), { onSqliteOpen: (run) => (exec = run) });
      try {
        await store.saveVirtualClock(at(0));
        exec('PRAGMA max_page_count = 1'); // the file cannot grow past the pages it has
        await expect(store.insertParticipant(participant({ name: 'x'.repeat(20_000) }))).rejects.toMatchObject({
          code: 'store_unavailable',
          message: expect.stringContaining('no space'),
        });
        // An update in place fits in the page the row already has: it proves nothing about space.
        await store.saveVirtualClock(at(1000));
        await expect(store.ping()).rejects.toMatchObject({
          code: 'store_unavailable',
          message: expect.stringContaining('no space'),
        });
        exec('PRAGMA max_page_count = 1073741823');
        await expect(store.ping()).resolves.toBeUndefined();
      } finally {
        await store.close();
      }
    },
  );
});
