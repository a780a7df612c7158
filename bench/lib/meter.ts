// What a timed part of a workload asked of its database: statements, PostgreSQL round trips,
// commits, and bytes written. Import this module first in a workload process.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { ownWalBytes, pgCounts, walPosition } from './pg-counters.ts';
import { sqliteCounts } from './sqlite-counters.ts';

/** Totals over the timed part; `bytesWritten` is `write()` bytes (SQLite) or this database's WAL bytes (PostgreSQL). */
export interface Writes {
  database: 'sqlite' | 'postgres';
  statements: number;
  /** PostgreSQL only: waits for an answer (statements sent behind one in flight share its trip). */
  roundTrips?: number;
  commits: number;
  bytesWritten: number;
  /** PostgreSQL only: the cluster's WAL position diff, other databases' writers included. */
  clusterWalBytes?: number;
  /** CPU time of this process (user + system), PostgreSQL's backends not included. */
  cpuMs: number;
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/**
 * Bytes this process passed to write()/pwrite()/writev() (`wchar` in /proc/self/io): for an
 * in-process SQLite database with silent logging, its WAL frames plus checkpoint copies into the
 * main file, whether or not they reach the disk. Counted at the syscall, the same for every system.
 */
export const writtenBytes = () =>
  Number(/wchar:\s*(\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1] ?? Number.NaN);

/** Starts counting; `stop()` returns the totals since. PostgreSQL adds a WAL-position client. */
export async function startMeter(options: { pgUrl?: string } = {}): Promise<{ stop(): Promise<Writes> }> {
  if (options.pgUrl) {
    const admin = new pg.Client({ connectionString: options.pgUrl });
    await admin.connect();
    const wal = await walPosition(admin);
    const before = pgCounts(); // after the admin's own query, so it is not counted
    const cpu = cpuMs();
    return {
      async stop() {
        const after = pgCounts();
        const cpuUsed = cpuMs() - cpu;
        const end = await walPosition(admin);
        const own = await ownWalBytes(admin, wal, end);
        await admin.end();
        return {
          database: 'postgres',
          statements: after.statements - before.statements,
          roundTrips: after.roundTrips - before.roundTrips,
          commits: after.commits - before.commits,
          bytesWritten: own,
          clusterWalBytes: Number(end.bytes - wal.bytes),
          cpuMs: cpuUsed,
        };
      },
    };
  }
  const before = sqliteCounts();
  const bytes = writtenBytes();
  const cpu = cpuMs();
  return {
    async stop() {
      const after = sqliteCounts();
      return {
        cpuMs: cpuMs() - cpu,
        database: 'sqlite',
        statements: after.statements - before.statements,
        commits: after.commits - before.commits,
        bytesWritten: writtenBytes() - bytes,
      };
    },
  };
}

/** The totals divided by the turns (or messages) they served. */
export function perTurn(writes: Writes, turns: number) {
  const per = (value: number) => Math.round((value / turns) * 100) / 100;
  return {
    database: writes.database,
    statements: per(writes.statements),
    ...(writes.roundTrips === undefined ? {} : { roundTrips: per(writes.roundTrips) }),
    commits: per(writes.commits),
    bytesWritten: per(writes.bytesWritten),
    cpuMs: Math.round((writes.cpuMs / turns) * 1000) / 1000,
    ...(writes.clusterWalBytes === undefined ? {} : { clusterWalBytes: per(writes.clusterWalBytes) }),
  };
}
