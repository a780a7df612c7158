import { describe, expect, it } from 'vitest';
import { databaseFault, isDatabaseUnavailable } from './db-errors.ts';

const sqlite = (errcode: number) => Object.assign(new Error('sqlite'), { code: 'ERR_SQLITE_ERROR', errcode });

describe('databaseFault', () => {
  it('tells SQLite faults that a retry can cure from query errors, extended codes included', () => {
    expect(databaseFault(sqlite(5))).toBe('busy');
    expect(databaseFault(sqlite(517))).toBe('busy'); // SQLITE_BUSY_SNAPSHOT
    expect(databaseFault(sqlite(13))).toBe('full');
    expect(databaseFault(sqlite(10 | (3 << 8)))).toBe('io'); // SQLITE_IOERR_WRITE
    expect(databaseFault(sqlite(2067))).toBeUndefined(); // a unique violation is the caller's
    expect(databaseFault(sqlite(1))).toBeUndefined();
  });

  it('counts a PostgreSQL query that got no answer, a connect timeout and a full disk as unavailable', () => {
    expect(databaseFault(new Error('Query read timeout'))).toBe('unreachable');
    expect(databaseFault(new Error('Connection terminated due to connection timeout'))).toBe('unreachable');
    expect(databaseFault(Object.assign(new Error('could not extend file'), { code: '53100' }))).toBe('full');
    expect(databaseFault(Object.assign(new Error('syntax error'), { code: '42601' }))).toBeUndefined();
  });

  it('looks through wrapped causes', () => {
    expect(isDatabaseUnavailable(new Error('turn failed', { cause: sqlite(5) }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('turn failed', { cause: new Error('bug') }))).toBe(false);
  });
});
