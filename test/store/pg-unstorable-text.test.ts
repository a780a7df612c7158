// @requires postgres
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { pgSchemas } from '../kit/pg-schemas.ts';
import { participant } from './store-fixtures.ts';

const schemas = pgSchemas('unstorable');
afterAll(() => schemas.dropAll());

// The last line behind the HTTP check and the inbound replacement (src/core/nul.ts): a text that
// still holds U+0000 when it reaches PostgreSQL is a request error that says why, not a 500.
describe('a text PostgreSQL cannot store', () => {
  it('is refused as invalid_request naming the NUL character, and nothing is written', async () => {
    const env = schemas.next();
    const store = await openStore(env.DATABASE_URL!, { schema: env.DATABASE_SCHEMA });
    try {
      const person = participant({ name: 'A\u0000B' });
      await expect(store.insertParticipant(person)).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining('U+0000'),
      });
      expect(await store.getParticipant(person.id)).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
