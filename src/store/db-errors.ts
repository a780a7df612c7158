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

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN']);
/** SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown, restart). */
const UNAVAILABLE_STATES = /^(08|57P0[1-3]|53300)/;

/**
 * True when `error` says the database cannot be reached right now (refused, dropped, shutting
 * down, out of connections, pool timeout), as opposed to a query it rejected. An error that
 * wraps one (its `cause`) says so too.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as DriverError & { cause?: unknown };
  if (depth < 3 && isDatabaseUnavailable(e.cause, depth + 1)) return true;
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || UNAVAILABLE_STATES.test(e.code))) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return isQueryReadTimeout(e) || /timeout exceeded when trying to connect|Connection terminated|connection is closed|Client has encountered a connection error/i.test(message);
}

/** pg's client-side `query_timeout`: the server did not answer in time (a hung or black-holed network). */
export function isQueryReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === 'Query read timeout';
}
