/** Recognising constraint violations of both drivers, so they can be mapped to `AppError`s. */

interface DriverError {
  code?: unknown;
  errcode?: unknown;
  constraint?: unknown;
  message?: unknown;
}

const SQLITE_CONSTRAINT_UNIQUE = 2067;
const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;
const PG_UNIQUE_VIOLATION = '23505';

/**
 * True when `error` is a unique violation of the named constraint: PostgreSQL reports the
 * constraint's name, SQLite only `table.column` in its message.
 */
export function isUniqueViolation(error: unknown, target: { constraint: string; sqliteColumns: string }): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as DriverError;
  if (e.code === PG_UNIQUE_VIOLATION) return e.constraint === target.constraint;
  if (e.errcode === SQLITE_CONSTRAINT_UNIQUE || e.errcode === SQLITE_CONSTRAINT_PRIMARYKEY) {
    return typeof e.message === 'string' && e.message.includes(target.sqliteColumns);
  }
  return false;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'EAI_AGAIN',
]);
/** SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown, restart). */
const UNAVAILABLE_STATES = /^(08|57P0[1-3]|53300)/;
/** Driver messages for a connection that could not be made or was lost. */
const CONNECTION_LOST = [
  /timeout exceeded when trying to connect/i,
  /Connection terminated/i,
  /connection is closed/i,
  /Client has encountered a connection error/i,
];

/** SQLite primary result codes (extended codes carry them in their low byte). */
const SQLITE_BUSY = 5;
const SQLITE_IOERR = 10;
const SQLITE_FULL = 13;
/** PostgreSQL disk_full. */
const PG_DISK_FULL = '53100';
/** `invalid byte sequence` (a NUL in text) and `untranslatable character` (`\u0000` in JSON). */
const PG_UNSTORABLE_TEXT = new Set(['22021', '22P05']);

/**
 * Why the database cannot do anything right now, when that is the reason `error` was thrown (or
 * its `cause`): `unreachable` (refused, dropped, shutting down, out of connections, a connect or
 * query timeout), `busy` (SQLite: another process holds the lock), `full` (no space left) or
 * `io` (SQLite: an I/O error). Undefined for a query the database rejected (a bug, a conflict).
 */
export type DatabaseFault = 'unreachable' | 'busy' | 'full' | 'io';

export function databaseFault(error: unknown, depth = 0): DatabaseFault | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as DriverError & { cause?: unknown };
  const wrapped = depth < 3 ? databaseFault(e.cause, depth + 1) : undefined;
  if (wrapped) return wrapped;
  if (typeof e.errcode === 'number') {
    const primary = e.errcode & 0xff;
    if (primary === SQLITE_BUSY) return 'busy';
    if (primary === SQLITE_FULL) return 'full';
    if (primary === SQLITE_IOERR) return 'io';
    return undefined;
  }
  if (e.code === PG_DISK_FULL) return 'full';
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || UNAVAILABLE_STATES.test(e.code)))
    return 'unreachable';
  const message = typeof e.message === 'string' ? e.message : '';
  if (isQueryReadTimeout(e) || CONNECTION_LOST.some((pattern) => pattern.test(message))) return 'unreachable';
  return undefined;
}

/**
 * True when `error` says the database cannot serve requests right now (see `databaseFault`), as
 * opposed to a query it rejected: worth a 503 and a retry, never an apology for good.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return databaseFault(error) !== undefined;
}

/** True when PostgreSQL refused a text it cannot store: one holding U+0000 (see `replaceNul`). */
export function isUnstorableText(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && PG_UNSTORABLE_TEXT.has(code);
}

/** pg's client-side `query_timeout`: the server did not answer in time (a hung or black-holed network). */
export function isQueryReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}
