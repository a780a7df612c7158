/** A durable timer: a row with a typed kind, a due time and a dedup key with replace semantics. */
export type TimerStatus = 'pending' | 'running' | 'done' | 'failed' | 'cancelled';

export interface Timer {
  id: string;
  /** A registered timer kind (`state-transition`, `daily-prompt`, `reminder`, ...). */
  kind: string;
  conversationId: string;
  participantId: string | null;
  /** At most one pending timer per key: a new one replaces the pending one. */
  dedupKey: string;
  dueAt: Date;
  /** Kind-specific payload, validated by the kind's schema when read back. */
  payload: unknown;
  status: TimerStatus;
  attempts: number;
  /** While running: when the claim expires and another worker may re-run it. */
  leaseUntil: Date | null;
  lastError: string | null;
  createdAt: Date;
}

export type NewTimer = Omit<Timer, 'status' | 'attempts' | 'lastError' | 'leaseUntil'>;
