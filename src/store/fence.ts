/**
 * Fences of a unit of work (decision 020): conditions a commit depends on, written as statements
 * that fail instead of reads the code branches on, so a pipelined PostgreSQL transaction can send
 * `COMMIT` behind them without waiting for their answers. A failed fence undoes the whole unit.
 *
 * - `participant`: the participant is still active (and their row is locked until the commit);
 * - `version`: the conversation still has the version the turn read;
 * - `inbox`: the inbox item is still pending (nobody else answered it);
 * - `transcript`: the seqs the caller numbered its messages with are still free;
 * - `events`: the seqs of the session events it writes are still free (migration 022).
 */
export type Fence = 'participant' | 'version' | 'inbox' | 'transcript' | 'events';

const FENCES: readonly Fence[] = ['participant', 'version', 'inbox', 'transcript', 'events'];

/** The SQLSTATE `promptpipe_fence` raises (migration 019); the fence's name is the error's detail. */
export const FENCE_SQLSTATE = 'PPF01';

/** A fence of the unit of work failed: nothing of the unit was kept. */
export class FenceFailed extends Error {
  readonly fence: Fence;

  constructor(fence: Fence) {
    super(`the unit of work's ${fence} fence failed`);
    this.name = 'FenceFailed';
    this.fence = fence;
  }
}

/** `error` as a `FenceFailed` when the server raised it from `promptpipe_fence`, else `error` itself. */
export function asFenceFailure(error: unknown): unknown {
  if (typeof error !== 'object' || error === null) return error;
  const { code, detail } = error as { code?: unknown; detail?: unknown };
  if (code !== FENCE_SQLSTATE) return error;
  const fence = FENCES.find((name) => name === detail);
  return fence ? new FenceFailed(fence) : error;
}

/**
 * PostgreSQL: `statement` (a select, or a write with `returning`) wrapped so that the server fails
 * the transaction unless it yields exactly the expected number of rows; the two extra parameters
 * (`$n+1`, `$n+2`) are that number and the fence's name.
 */
export function fencedSql(statement: string, parameterCount: number): string {
  const expected = `$${parameterCount + 1}`;
  const fence = `$${parameterCount + 2}`;
  const check = `promptpipe_fence((select count(*) from fenced) = ${expected}::bigint, ${fence}::text)`;
  return `with fenced as (${statement}) select ${check}`;
}
