// CPU time of the PostgreSQL backends serving one application_name, read from /proc/<pid>/stat
// (the server runs on this machine). Only those backends: not the WAL writer, checkpointer,
// background writer or autovacuum, which serve every database of the cluster alike.
import type pg from 'pg';
import { cpuMs } from './server-process.ts';

/** CPU ms used so far by each backend whose application_name is `application`. */
export async function backendCpu(admin: pg.Client, application: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [
    application,
  ]);
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      out.set(pid, cpuMs(pid));
    } catch {
      // Gone between the query and the read.
    }
  }
  return out;
}

/**
 * CPU ms between two readings: a backend seen only at the end started meanwhile and counts whole
 * (its connection set-up included); one gone by the end is lost (pools here keep theirs open).
 */
export function backendCpuDelta(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}
