// Counts what this process sends to PostgreSQL through `pg`, the same way for every system:
// importing it patches `pg.Client.prototype.query` (pools use it too). Each call is one statement.
// A statement sent while the connection still waits for an earlier answer (pg's pipeline mode)
// rides that round trip; one sent on an idle connection starts a new round trip (a batch of the
// store's is one send: its statements share a trip). Cost: one regex test or two per query.
import pg from 'pg';
import { PgBatch } from '../../src/store/pg-batch.ts';

/** Statements sent, round trips (waits for an answer) and commits made by this process so far. */
export interface PgCounts {
  statements: number;
  roundTrips: number;
  commits: number;
}

const counts: PgCounts = { statements: 0, roundTrips: 0, commits: 0 };

/** pg's own queues: what a client has sent or will send and not yet had answered. */
interface PgQueues {
  _queryQueue?: unknown[];
  _sentQueryQueue?: unknown[];
  _activeQuery?: unknown;
}

const waiting = (client: pg.Client) => {
  const queues = client as unknown as PgQueues;
  return (queues._queryQueue?.length ?? 0) + (queues._sentQueryQueue?.length ?? 0) > 0 || Boolean(queues._activeQuery);
};
const inTransaction = new WeakSet<pg.Client>();

function count(client: pg.Client, text: string, rides: boolean): void {
  counts.statements += 1;
  // Without pipeline mode pg queues a query behind the one in flight and sends it after: its own trip.
  if (!rides && (!client.pipeline || !waiting(client))) counts.roundTrips += 1;
  if (/^\s*(begin|start transaction)\b/i.test(text)) inTransaction.add(client);
  else if (/^\s*(commit|end)\b/i.test(text)) {
    counts.commits += 1;
    inTransaction.delete(client);
  } else if (/^\s*rollback\s*$/i.test(text)) inTransaction.delete(client);
  else if (
    !inTransaction.has(client) &&
    /^\s*(insert|update|delete|with\b[\s\S]*\b(insert|update|delete))\b/i.test(text)
  )
    counts.commits += 1;
}

const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(pg.Client.prototype as unknown as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
  const config = args[0];
  // A batch (the store's pipelined transactions) is its statements, sent in one write: one trip at most.
  const texts =
    config instanceof PgBatch
      ? config.statements.map((statement) => statement.text)
      : [typeof config === 'string' ? config : String((config as { text?: unknown } | null)?.text ?? '')];
  texts.forEach((text, index) => count(this, text, index > 0));
  return query.apply(this, args);
};

export const pgCounts = (): PgCounts => ({ ...counts });

/** A WAL position as text ('16/B374D848') and as a byte offset. */
export interface WalPosition {
  lsn: string;
  bytes: bigint;
}

export async function walPosition(client: pg.Client): Promise<WalPosition> {
  const { rows } = await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
  const [high, low] = rows[0]!.lsn.split('/');
  return { lsn: rows[0]!.lsn, bytes: (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`) };
}

/**
 * WAL bytes between two positions that belong to this database: records touching its relations
 * (full-page images included) plus every record of the transactions that wrote them (their
 * commit records). The WAL is shared by the whole cluster, so a plain position diff also counts
 * other databases' writers; this one leaves out them, checkpoints and page padding. Needs the
 * pg_walinspect extension (PostgreSQL 15+, created here when missing; superuser).
 */
export async function ownWalBytes(client: pg.Client, from: WalPosition, to: WalPosition): Promise<number> {
  await client.query('create extension if not exists pg_walinspect');
  const { rows } = await client.query<{ bytes: string }>(
    `with records as (select xid::text as xid, record_length, block_ref
                       from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)),
          mine as (select distinct xid from records
                    where xid <> '0' and block_ref like
                          '%/' || (select oid from pg_database where datname = current_database()) || '/%')
     select coalesce(sum(record_length), 0)::text as bytes from records
      where xid in (select xid from mine)
         or block_ref like '%/' || (select oid from pg_database where datname = current_database()) || '/%'`,
    [from.lsn, to.lsn],
  );
  return Number(rows[0]!.bytes);
}
