import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import type { TransactionRunner, TransactionWork } from './query-context.ts';
import type { DirectRunner } from './kysely-store.ts';

/** Most transactions one commit carries: a bound on how long the first of them waits for the last. */
const MAX_GROUP = 64;

const BEGIN = CompiledQuery.raw('begin immediate');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');
const SAVEPOINT = CompiledQuery.raw('savepoint member');
const RELEASE = CompiledQuery.raw('release member');
const ROLLBACK_MEMBER = CompiledQuery.raw('rollback to member');

interface Member {
  work: (trx: Kysely<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * SQLite transactions with group commit (decision 020). One writer at a time holds the store's
 * only connection (`BEGIN IMMEDIATE`, so a write never fails half-way for a lock). A transaction
 * asked for while a group runs joins it: each but the first runs in a savepoint of its own, so
 * one that fails rolls back alone and its neighbours go on, and the group commits once, which writes the pages
 * they share (index pages, the tail of each table) once. A transaction asked for when nothing
 * runs starts at once: a lone turn is never delayed. One that says other work is under way
 * (`gather`: the engine has other turns running) waits for the event loop to come round, so that
 * the turns whose model answered in the same round commit with it (node:sqlite never yields, so
 * without that nothing would ever be running to join). Each caller's promise settles after the
 * group's COMMIT (or with the error that undid it).
 *
 * While the connection is held, plain calls on the store wait for it (the driver's mutex)
 * instead of running inside the group, so a transaction's work must not await a plain call on
 * the store: it would wait for ever.
 *
 * With `direct`, BEGIN, COMMIT and the savepoints run straight on the held connection (a lone
 * turn's two statements skip Kysely's executor and its dozen promises each); a BEGIN refused for
 * a lock another process holds takes the driver's way, which retries without blocking.
 */
export function sqliteGroupCommit(db: Kysely<Database>, direct?: DirectRunner): TransactionRunner {
  const queue: Member[] = [];
  let draining = false;
  let gathering = false;

  const drain = async () => {
    gathering = false;
    draining = true;
    try {
      while (queue.length > 0)
        await db.connection().execute((connection) => runGroup(controlOn(connection, direct), queue));
    } finally {
      draining = false;
    }
  };

  return <T>(work: TransactionWork<T>, options: { gather?: boolean } = {}) =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (draining) return;
      if (!options.gather) void drain();
      else if (!gathering) {
        gathering = true;
        setImmediate(() => void (gathering && drain()));
      }
    });
}

/** The held connection, and how its transaction-control statements run on it. */
interface Held {
  connection: Kysely<Database>;
  control(query: CompiledQuery): Promise<unknown>;
}

function controlOn(connection: Kysely<Database>, direct: DirectRunner | undefined): Held {
  return {
    connection,
    // BEGIN is run as outside a transaction: refused for a lock, it takes the driver's way (retried).
    control: async (query) => {
      if (!direct?.(query.sql, [], query !== BEGIN)) await connection.executeQuery(query);
    },
  };
}

/** One group: BEGIN, each queued member in a savepoint (members that arrive meanwhile join), COMMIT. */
async function runGroup({ connection, control }: Held, queue: Member[]): Promise<void> {
  try {
    await control(BEGIN);
  } catch (error) {
    for (const member of queue.splice(0)) member.reject(error); // each would have failed alike
    return;
  }
  const done: Array<{ member: Member; result: unknown }> = [];
  const failAll = async (error: unknown) => {
    await control(ROLLBACK).catch(() => undefined);
    for (const { member } of done) member.reject(error);
  };
  // The first member needs no savepoint (a savepoint copies every page it changes into a
  // sub-journal): if it fails, nothing else is in the transaction yet, and it is rolled back whole.
  const first = queue.shift()!;
  try {
    done.push({ member: first, result: await first.work(connection) });
  } catch (error) {
    first.reject(error);
    await control(ROLLBACK).catch(() => undefined);
    return; // the members queued meanwhile start a group of their own
  }
  for (let count = 1; queue.length > 0 && count < MAX_GROUP; count++) {
    const member = queue.shift()!;
    try {
      await control(SAVEPOINT);
      const result = await member.work(connection);
      await control(RELEASE);
      done.push({ member, result });
    } catch (error) {
      member.reject(error);
      try {
        await control(ROLLBACK_MEMBER);
        await control(RELEASE);
      } catch {
        // SQLite undid the whole transaction (a full disk, an I/O error): so is every member's work.
        return failAll(error);
      }
    }
  }
  try {
    await control(COMMIT);
  } catch (error) {
    return failAll(error);
  }
  for (const { member, result } of done) member.resolve(result);
}
