import { describe, expect, it } from 'vitest';
import { lockConversation } from './conversation-lock.ts';
import type { QueryContext } from './query-context.ts';
import { compileOnlyKysely } from '../../test/kit/compile-only-kysely.ts';

const db = compileOnlyKysely('postgres');

/** A PostgreSQL transaction's context that records what it sends. */
function transaction(sent: unknown[][]): QueryContext {
  const ctx: QueryContext = {
    db,
    dialect: 'postgres',
    inTransaction: true,
    atomic: (work) => work(ctx),
    direct: (sqlText, parameters) => {
      expect(sqlText).toMatch(/^select "id" from "conversations" where "id" = \$1 for no key update$/);
      sent.push([...parameters]);
      return { rows: [] };
    },
    locked: new Set(),
  };
  return ctx;
}

describe('a conversation row lock', () => {
  it('is taken once a transaction for each conversation, and again in the next transaction', async () => {
    const sent: unknown[][] = [];
    const first = transaction(sent);
    await lockConversation(first, 'c1');
    await lockConversation(first, 'c2');
    await lockConversation(first, 'c1');
    expect(sent).toEqual([['c1'], ['c2']]);
    await lockConversation(transaction(sent), 'c1');
    expect(sent).toEqual([['c1'], ['c2'], ['c1']]);
  });
});
