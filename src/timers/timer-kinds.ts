import type { z } from 'zod';
import type { NewTimer, Timer } from '../core/timer.ts';
import type { StoreTx } from '../store/store.ts';

/** What a firing asked of the model, for its turn record. */
export interface TimerUsage {
  modelCalls: number;
  modelMs: number;
}

/** What a timer handler may use; the handler re-checks state at fire time. */
export interface TimerContext {
  /** When the timer fires (the clock's now when it was claimed). */
  now: Date;
  signal: AbortSignal;
  /**
   * When the timer runs again if this attempt throws; null on its last attempt (a throw then
   * gives up). A handler that can wait for something (a model outage) decides with it.
   */
  retryAt: Date | null;
  /**
   * Marks the timer done and writes its turn record (trigger `timer`, module the kind) in the
   * handler's transaction, with its effects. A handler that returns without calling it (nothing
   * was left to do) is completed by the worker, with its record; one that throws gets a failed record.
   */
  complete(tx: StoreTx, usage?: TimerUsage): Promise<void>;
}

/** Where and when one timer of a kind fires, and under which key it is the only pending one. */
export interface TimerPlacement {
  id: string;
  conversationId: string;
  participantId: string | null;
  /** The dedup key: arming a key that is pending replaces that timer. */
  key: string;
  dueAt: Date;
  now: Date;
}

/**
 * A kind's name and payload, and the only way to arm it: `row`/`schedule` take the payload as it
 * is stored (the schema's input), checked by the compiler, so a kind is never retyped as a bare
 * string where it is scheduled (issue #19). Its handler is added by `defineTimerKind`.
 */
export interface TimerType<Payload = unknown, Stored = Payload> {
  readonly kind: string;
  readonly payload: z.ZodType<Payload, Stored>;
  /** The timer row that arms this kind (for `tx.scheduleTimer`). */
  row(payload: Stored, at: TimerPlacement): NewTimer;
  /** Arms this kind in `tx`; returns the row. */
  schedule(tx: Pick<StoreTx, 'scheduleTimer'>, payload: Stored, at: TimerPlacement): Promise<NewTimer>;
}

export function timerType<Schema extends z.ZodType>(
  kind: string,
  payload: Schema,
): TimerType<z.output<Schema>, z.input<Schema>> {
  const row = (stored: z.input<Schema>, at: TimerPlacement): NewTimer => ({
    id: at.id,
    kind,
    conversationId: at.conversationId,
    participantId: at.participantId,
    dedupKey: at.key,
    dueAt: at.dueAt,
    payload: stored,
    createdAt: at.now,
  });
  return {
    kind,
    payload: payload as unknown as z.ZodType<z.output<Schema>, z.input<Schema>>,
    row,
    async schedule(tx, stored, at) {
      const timer = row(stored, at);
      await tx.scheduleTimer(timer);
      return timer;
    },
  };
}

/** A timer kind: its payload schema and its handler. Kinds are looked up by name, never by method. */
export interface TimerKind<Payload = unknown> {
  kind: string;
  payload: z.ZodType<Payload>;
  handle(timer: Timer, payload: Payload, context: TimerContext): Promise<void>;
  /**
   * Runs when the timer has failed for the last time, before it is marked failed: a recurring
   * kind arms its next occurrence here, so one bad day does not end the series. If this throws
   * too, the timer is retried later as if it had not given up.
   */
  giveUp?(timer: Timer, payload: Payload, context: TimerContext): Promise<void>;
  /** Attempts before giving up, when the kind needs other than the worker's default. */
  maxAttempts?: number;
}

export function defineTimerKind<Schema extends z.ZodType>(kind: {
  kind: string;
  payload: Schema;
  handle: TimerKind<z.output<Schema>>['handle'];
  giveUp?: TimerKind<z.output<Schema>>['giveUp'];
  maxAttempts?: number;
}): TimerKind<z.output<Schema>> {
  // zod cannot prove a generic Schema is a ZodType of its own output; it always is.
  return kind as unknown as TimerKind<z.output<Schema>>;
}

export class TimerKindRegistry {
  readonly #kinds = new Map<string, TimerKind>();

  register(...kinds: Array<TimerKind<never>>): this {
    for (const kind of kinds) {
      if (this.#kinds.has(kind.kind)) throw new Error(`timer kind "${kind.kind}" is registered twice`);
      this.#kinds.set(kind.kind, kind as TimerKind);
    }
    return this;
  }

  get(kind: string): TimerKind | undefined {
    return this.#kinds.get(kind);
  }
}
