// @requires postgres
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.ts';
import { at, toolCall, turn } from './store-fixtures.ts';
import { oldDatabasePlaces, oldDatabases } from './migration-kit.ts';

const places = oldDatabasePlaces('migration_024');

/** A turn as version 023 stored it: its record, and its two calls as rows of `tool_calls`. */
async function seedTurn(db: Kysely<unknown>): Promise<void> {
  await sql`insert into participants (id, phone_number, status, debug, enrolled_at, created_at, updated_at)
    values ('p_1', '+14165550101', 'active', 0, 0, 0, 0)`.execute(db);
  await sql`insert into conversations (id, participant_id, channel, flow, state, version, created_at, updated_at)
    values ('c_1', 'p_1', 'webhook', 'habit-coach', 'CONVERSATION_ACTIVE', 1, 0, 0)`.execute(db);
  await sql`insert into turns (id, conversation_id, inbox_id, trigger, module, status, model_calls, tool_rounds,
      model_ms, tool_ms, total_ms, started_at, finished_at, attempts)
    values ('t_old', 'c_1', null, 'message', 'INTAKE', 'completed', 2, 1, 120, 15, 140, 0, 140, 1)`.execute(db);
  await sql`insert into tool_calls (id, turn_id, conversation_id, round, name, arguments, result, status, duration_ms,
      created_at)
    values ('old_2', 't_old', 'c_1', 1, 'save_user_profile', '{}', 'saved', 'ok', 3, 0),
           ('old_1', 't_old', 'c_1', 2, 'schedule', '{"at":"9:00"}', 'bad time', 'error', 1, 0)`.execute(db);
}

describe.each(oldDatabases('023_event_pages_v2', seedTurn, places))('migration 024 on $name', ({ prepare }) => {
  it("lists a version 023 turn's calls, then a new turn's calls after them", async () => {
    const url = await prepare();
    const store = await openStore(url, { schema: places.pgSchema });
    try {
      const old = await store.listToolCalls('c_1');
      expect(old.map((call) => [call.id, call.turnId, call.round, call.status])).toEqual([
        ['old_2', 't_old', 1, 'ok'],
        ['old_1', 't_old', 2, 'error'],
      ]);
      const next = turn('c_1', { startedAt: at(1000) });
      const calls = [toolCall('c_1', next.id, { createdAt: at(1000) })];
      await store.insertTurn(next, calls);
      expect(await store.listToolCalls('c_1')).toEqual([...old, ...calls]);
      expect((await store.listTurns('c_1')).map((t) => t.id)).toEqual(['t_old', next.id]);
    } finally {
      await store.close();
    }
  });
});
