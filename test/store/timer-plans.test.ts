import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { coachingColumns } from '../../src/flows/habit-coach/coaching-queries.ts';
import { openStore } from '../../src/store/open-store.ts';
import { platformQueries } from '../../src/http/go-platform/platform-queries.ts';
import { participantTimerQueries } from '../../src/store/participant-timers-queries.ts';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { at, conversation, participant, timer } from './store-fixtures.ts';

/** The SQL of every statement `run` makes SQLite prepare that reads or updates the timers table. */
async function timerStatements(run: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const prepare = DatabaseSync.prototype.prepare;
  DatabaseSync.prototype.prepare = function (this: DatabaseSync, sql: string) {
    if (/\btimers\b/.test(sql) && /^\s*(select|update)/i.test(sql)) seen.push(sql);
    return prepare.call(this, sql);
  };
  try {
    await run();
  } finally {
    DatabaseSync.prototype.prepare = prepare;
  }
  return seen;
}

/** Each statement's plan on the database at `path`, its steps joined by "; ". */
function plans(path: string, statements: string[]): [string, string][] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return statements.map((sql) => [
      sql,
      (db.prepare(`explain query plan ${sql}`).all() as { detail: string }[]).map((row) => row.detail).join('; '),
    ]);
  } finally {
    db.close();
  }
}

// SQLite plans without statistics: an index on the status alone, which also gives the due order,
// looked as good to it as one on what the statement knows, and read every active timer.
describe('Timer reads on SQLite', () => {
  it("find a participant's pending timers through the participant, not among every pending timer", async () => {
    const path = tempSqliteUrl().slice('sqlite:'.length);
    const store = await openStore(`sqlite:${path}`);
    const p = participant();
    const c = conversation(p.id, { flow: 'habit-coach' });
    const other = participant();
    const elsewhere = conversation(other.id, { flow: 'habit-coach' });
    let pending: unknown[] = [];
    await store.insertParticipant(p);
    await store.insertParticipant(other);
    await store.insertConversation(c);
    await store.insertConversation(elsewhere);
    await store.scheduleTimer(timer(c.id, p.id, { dueAt: at(2000) }));
    await store.scheduleTimer(timer(elsewhere.id, other.id, { dueAt: at(1000) }));
    const statements = await timerStatements(async () => {
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
    for (const [sql, plan] of plans(path, statements)) {
      expect(plan, sql).toMatch(/SEARCH timers USING INDEX timers_participant \(participant_id=\? AND status=\?\)/);
      expect(plan, sql).not.toMatch(/timers_due/);
    }
  });

  it("find and cancel a Go series' active timer by id or dedup key, not among every active timer", async () => {
    const path = tempSqliteUrl().slice('sqlite:'.length);
    const store = await openStore(`sqlite:${path}`);
    const c = conversation(null);
    await store.insertConversation(c);
    const series = timer(c.id, null, { dedupKey: 'series-1' });
    await store.scheduleTimer(series);
    await store.scheduleTimer(timer(c.id, null, { dedupKey: 'series-2' }));
    const platform = store.extend(platformQueries).ops;
    const statements = await timerStatements(async () => {
      expect((await platform.activeTimer('none', 'series-1'))?.id).toBe(series.id);
      expect((await platform.activeTimer(series.id, 'none'))?.dedupKey).toBe('series-1');
      expect(await platform.cancelSeries('series-1', at(5000))).toBe(1);
    });
    await store.close();
    expect(statements).toHaveLength(2);
    for (const [sql, plan] of plans(path, statements)) {
      // The pending row through the partial unique index; the running ones are the few firing now.
      expect(plan, sql).toMatch(/MULTI-INDEX OR/);
      expect(plan, sql).toMatch(/SEARCH timers USING (COVERING )?INDEX timers_pending_dedup_key \(dedup_key=\?\)/);
    }
  });
});
