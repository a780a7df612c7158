// Counts what every SQLite system asks of node:sqlite, the same way for all of them. Import it
// first in a workload process: it patches `DatabaseSync.prototype` and `StatementSync.prototype`.
// Cost: one WeakMap lookup and a property read per statement executed, in every system alike.
import { DatabaseSync, StatementSync } from 'node:sqlite';

/** Statements executed and commits made in this process so far. */
export interface SqliteCounts {
  statements: number;
  commits: number;
}

type Kind = 'commit' | 'write' | 'other';
const counts: SqliteCounts = { statements: 0, commits: 0 };
const prepared = new WeakMap<StatementSync, { db: DatabaseSync; kind: Kind }>();

/** COMMIT/END, a data write (a `with` only when it writes), or anything else (reads, BEGIN, pragmas). */
function kindOf(sql: string): Kind {
  if (/^\s*(commit|end)\b/i.test(sql)) return 'commit';
  if (
    /^\s*(insert|update|delete|replace)\b/i.test(sql) ||
    (/^\s*with\b/i.test(sql) && /\b(insert|update|delete)\b/i.test(sql))
  )
    return 'write';
  return 'other';
}

/** One execution: a COMMIT commits; so does a write run in autocommit mode (outside BEGIN … COMMIT). */
function count(db: DatabaseSync | undefined, kind: Kind): void {
  counts.statements += 1;
  if (kind === 'commit' || (kind === 'write' && db && !db.isTransaction)) counts.commits += 1;
}

const prepare = DatabaseSync.prototype.prepare;
DatabaseSync.prototype.prepare = function (this: DatabaseSync, sql: string, ...rest: unknown[]) {
  const statement = (prepare as (sql: string, ...rest: unknown[]) => StatementSync).call(this, sql, ...rest);
  prepared.set(statement, { db: this, kind: kindOf(sql) });
  return statement;
} as typeof prepare;

// `exec` counts as one statement per call, even with several statements in its text (only setup uses that).
const exec = DatabaseSync.prototype.exec;
DatabaseSync.prototype.exec = function (this: DatabaseSync, sql: string) {
  count(this, kindOf(sql));
  return exec.call(this, sql);
};

for (const method of ['run', 'all', 'get', 'iterate'] as const) {
  const original = StatementSync.prototype[method] as (...args: unknown[]) => unknown;
  (StatementSync.prototype as unknown as Record<string, unknown>)[method] = function (
    this: StatementSync,
    ...args: unknown[]
  ) {
    const info = prepared.get(this);
    count(info?.db, info?.kind ?? 'other');
    return original.apply(this, args);
  };
}

export const sqliteCounts = (): SqliteCounts => ({ ...counts });
