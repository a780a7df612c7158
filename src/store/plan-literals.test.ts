import { describe, expect, it } from 'vitest';
import { PlanLiteralsPlugin } from './plan-literals.ts';
import { prepared } from './prepared.ts';
import { compileOnlyKysely } from '../../test/kit/compile-only-kysely.ts';

const db = compileOnlyKysely('sqlite', [new PlanLiteralsPlugin()]);

describe('plan literals', () => {
  it('writes indexed statuses and small constant limits into the SQL, and nothing else', () => {
    const query = db
      .selectFrom('inbox')
      .select('id')
      .where('status', '=', 'pending')
      .where('sender', '=', 'pending')
      .limit(1)
      .compile();
    expect(query.sql).toBe(`select "id" from "inbox" where "status" = 'pending' and "sender" = ? limit 1`);
    expect(query.parameters).toEqual(['pending']);
    expect(db.selectFrom('inbox').select('id').where('status', '=', 'failed').limit(5000).compile()).toMatchObject({
      sql: 'select "id" from "inbox" where "status" = ? limit ?',
      parameters: ['failed', 5000],
    });
  });

  it("leaves a prepared query's arguments bound, whatever the call passes", async () => {
    const compiled: string[] = [];
    const query = prepared((k, a: { limit: number }) => k.selectFrom('inbox').select('id').limit(a.limit));
    const ctx = {
      db,
      dialect: 'sqlite' as const,
      inTransaction: false,
      atomic: () => Promise.reject(new Error('unused')),
      direct: (sqlText: string) => {
        compiled.push(sqlText);
        return { rows: [] };
      },
    };
    await query.rows(ctx, { limit: 1 });
    expect(compiled).toEqual(['select "id" from "inbox" limit ?']);
  });
});
