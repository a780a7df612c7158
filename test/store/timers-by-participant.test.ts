import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { coachingColumns } from '../../src/flows/habit-coach/coaching-queries.ts';
import { openStore } from '../../src/store/open-store.ts';
import { participantTimerQueries } from '../../src/store/participant-timers-queries.ts';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { at, conversation, participant, timer } from './store-fixtures.ts';

/** The SQL of every statement `run` makes SQLite prepare that reads the timers table. */
async function timerStatements(run: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const prepare = DatabaseSync.prototype.prepare;
  DatabaseSync.prototype.prepare = function (this: DatabaseSync, sql: string) {
    if (/\btimers\b/.test(sql) && /^\s*select/i.test(sql)) seen.push(sql);
    return prepare.call(this, sql);
  };
  try {
    await run();
  } finally {
    DatabaseSync.prototype.prepare = prepare;
  }
  return seen;
}

describe("A participant's pending timers (SQLite)", () => {
  it('are found through the participant, never by reading every pending timer of the study', async () => {
    const path = tempSqliteUrl().slice('sqlite:'.length);
    const store = await openStore(`sqlite:${path}`);
    const p = participant();
    const c = conversation(p.id, { flow: 'habit-coach' });
    const other = participant();
    const elsewhere = conversation(other.id, { flow: 'habit-coach' });
    let pending: unknown[] = [];
    const statements = await timerStatements(async () => {
      await store.insertParticipant(p);
      await store.insertParticipant(other);
      await store.insertConversation(c);
      await store.insertConversation(elsewhere);
      await store.scheduleTimer(timer(c.id, p.id, { dueAt: at(2000) }));
      await store.scheduleTimer(timer(elsewhere.id, other.id, { dueAt: at(1000) }));
      // The habit coach's turn context, its own listing, and the participant API's.
      const context = await store.getTurnContext(c.id, 20, [{ flow: 'habit-coach', columns: coachingColumns }]);
      expect(context?.flowColumns?.timers).toContain('"due_at"');
      pending = [
        ...(await store.listPendingTimers(p.id)),
        ...(await store.extend(participantTimerQueries).ops.pendingTimersOf(p.id, c.id)),
      ];
    });
    await store.close();
    expect(pending).toHaveLength(2);
    expect(statements).toHaveLength(3);
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      for (const sql of statements) {
        const plan = (db.prepare(`explain query plan ${sql}`).all() as { detail: string }[])
          .map((row) => row.detail)
          .join('; ');
        expect(plan, sql).toMatch(/SEARCH timers USING INDEX timers_participant \(participant_id=\? AND status=\?\)/);
        expect(plan, sql).not.toMatch(/timers_due/);
      }
    } finally {
      db.close();
    }
  });
});
