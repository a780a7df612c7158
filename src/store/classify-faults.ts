import { AppError, isAppError } from '../core/errors.ts';
import { databaseFault, isUnstorableText, type DatabaseFault } from './db-errors.ts';
import type { Store } from './store.ts';

/** What anyone is told about each database fault (never the driver's own message: hosts, ports). */
const FAULT_MESSAGES: Record<DatabaseFault, string> = {
  unreachable: 'the database cannot be reached right now',
  busy: 'the database is locked by another process right now',
  full: 'the database cannot be written right now: no space left',
  io: 'the database cannot be written right now: a storage error',
};

/**
 * `error` as the store's callers see it: a fault that makes the database unable to serve right
 * now becomes `AppError('store_unavailable')` (retryable, the driver's error as its cause);
 * anything else is left as it is.
 */
export function classifyStoreError(error: unknown): unknown {
  if (isAppError(error)) return error; // already says what it is (a conflict, a duplicate phone)
  if (isUnstorableText(error))
    return new AppError('invalid_request', 'a text holds the NUL character (U+0000), which the database cannot store', {
      cause: error,
    });
  const fault = databaseFault(error);
  if (!fault) return error;
  return new AppError('store_unavailable', `${FAULT_MESSAGES[fault]}; retry shortly`, {
    fault: 'system',
    retryable: true,
    cause: error,
  });
}

type AnyFunction = (...args: unknown[]) => unknown;

/**
 * The store with every operation's driver faults classified (decision 019): the engine, the
 * dispatcher and the HTTP layer test `store_unavailable`, never SQLSTATEs or driver messages.
 * Faults inside a transaction surface from `transaction` itself, classified there.
 */
export function classifyFaults(store: Store): Store {
  const extend: Store['extend'] = (queries) => {
    const extension = store.extend(queries);
    return {
      ops: wrapMethods(extension.ops as object) as typeof extension.ops,
      transaction: guard(extension.transaction as AnyFunction) as typeof extension.transaction,
    };
  };
  return { ...wrapMethods(store), extend };
}

function wrapMethods<T extends object>(target: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(target))
    out[key] = typeof value === 'function' ? guard((value as AnyFunction).bind(target)) : value;
  return out as T;
}

function guard<F extends AnyFunction>(operation: F): F {
  return (async (...args: unknown[]) => {
    try {
      return await operation(...args);
    } catch (error) {
      throw classifyStoreError(error);
    }
  }) as F;
}
