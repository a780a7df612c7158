import type { TurnRecord } from './domain.ts';

/** What a turn record says when nothing was measured: no model or tool work, no latency. */
type Measured = 'modelCalls' | 'toolRounds' | 'modelMs' | 'toolMs' | 'totalMs' | 'firstTokenMs' | 'timeToStatusMs';

/** A turn record of work done outside the tool loop (a timer firing, a message given up): measures default to none. */
export function unmeasuredTurn(fields: Omit<TurnRecord, Measured> & Partial<Pick<TurnRecord, Measured>>): TurnRecord {
  return {
    modelCalls: 0,
    toolRounds: 0,
    modelMs: 0,
    toolMs: 0,
    totalMs: 0,
    firstTokenMs: null,
    timeToStatusMs: null,
    ...fields,
  };
}
