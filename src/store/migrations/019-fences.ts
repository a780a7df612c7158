import { sql, type Kysely, type Migration } from 'kysely';
import type { SqlDialect } from '../query-context.ts';
import { FENCE_SQLSTATE } from '../fence.ts';

/**
 * PostgreSQL: `promptpipe_fence(ok, fence)`, which fails its statement (and so the transaction)
 * unless `ok` (decision 020). A turn's commit asserts its fences with it, so `COMMIT` can follow
 * them without waiting for their answers. SQLite checks the same fences on the answers, which it
 * has at once; it needs nothing here.
 */
export function fencesMigration(dialect: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect !== 'postgres') return;
      await sql`
        create function promptpipe_fence(ok boolean, fence text) returns boolean
        language plpgsql as $$
        begin
          if ok then return true; end if;
          raise exception 'fence % failed', fence using errcode = '${sql.raw(FENCE_SQLSTATE)}', detail = fence;
        end
        $$`.execute(db);
    },
  };
}
