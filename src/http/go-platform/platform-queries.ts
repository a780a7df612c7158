import type { ExpressionBuilder, Selectable } from 'kysely';
import { fromMs, toMs } from '../../store/codec.ts';
import type { QueryContext } from '../../store/query-context.ts';
import type { Database, TimersTable } from '../../store/schema.ts';

/** A receipt as the Go server listed them: recipient, status, Unix seconds. */
export interface GoReceipt {
  to: string;
  status: string;
  time: number;
}

/** A participant's message as the Go server listed responses. */
export interface GoResponse {
  from: string;
  body: string;
  time: number;
}

/** A timer that has not fired yet, as `GET /timers` shows it. */
export interface ActiveTimer {
  id: string;
  kind: string;
  conversationId: string;
  participantId: string | null;
  dedupKey: string;
  dueAt: Date;
  payload: unknown;
  createdAt: Date;
}

const seconds = (ms: number | string) => Math.floor(Number(ms) / 1000);
const ACTIVE = ['pending', 'running'];

/**
 * The active rows of a dedup key, one index search per status: the pending row through the
 * partial unique index, a running one among the few running. (`status in (…) and dedup_key = …`
 * read every active timer on SQLite, whose planner took the status index.)
 */
const activeByKey = (eb: ExpressionBuilder<Database, 'timers'>, dedupKey: string) =>
  eb.or(ACTIVE.map((status) => eb.and([eb('status', '=', status), eb('dedup_key', '=', dedupKey)])));

/**
 * The Go platform routes' reads (a store extension, decision 019): receipts from the outbox and
 * the providers' delivery receipts, responses from the transcripts, every timer still to fire.
 * Only participants' conversations count (a web session has no phone number).
 */
export function platformQueries({ db }: QueryContext) {
  return {
    /** Every send (`sent`, or `failed` when it never went), then what providers reported, oldest first. */
    async receipts(): Promise<GoReceipt[]> {
      const sends = await db
        .selectFrom('outbox')
        .select(['recipient', 'status', 'sent_at', 'created_at'])
        .where('participant_id', 'is not', null)
        .where((eb) => eb.or([eb('sent_at', 'is not', null), eb('status', '=', 'failed')]))
        .execute();
      const reports = await db
        .selectFrom('delivery_receipts as r')
        .innerJoin('outbox as o', (join) =>
          join.onRef('o.channel', '=', 'r.channel').onRef('o.provider_message_id', '=', 'r.provider_message_id'),
        )
        .select(['o.recipient', 'r.status', 'r.at'])
        .where('o.participant_id', 'is not', null)
        .where('r.status', '!=', 'sent')
        .execute();
      return [
        ...sends.map((row) => ({
          to: row.recipient,
          status: row.sent_at !== null ? 'sent' : 'failed',
          time: seconds(row.sent_at ?? row.created_at),
        })),
        ...reports.map((row) => ({ to: row.recipient, status: row.status, time: seconds(row.at) })),
      ].sort((a, b) => a.time - b.time);
    },

    /** What participants wrote (messages and poll answers), oldest first. */
    async responses(): Promise<GoResponse[]> {
      const rows = await db
        .selectFrom('messages as m')
        .innerJoin('conversations as c', 'c.id', 'm.conversation_id')
        .innerJoin('participants as p', 'p.id', 'c.participant_id')
        .select(['p.phone_number', 'm.text', 'm.created_at'])
        .where('m.role', '=', 'user')
        .where('m.source', '=', 'participant')
        .orderBy('m.created_at')
        .orderBy('m.seq')
        .execute();
      return rows.map((row) => ({ from: row.phone_number, body: row.text, time: seconds(row.created_at) }));
    },

    /** Timers pending or firing right now, soonest first. */
    async activeTimers(): Promise<ActiveTimer[]> {
      const rows = await db.selectFrom('timers').selectAll().where('status', 'in', ACTIVE).orderBy('due_at').execute();
      return rows.map(toActiveTimer);
    },

    /** The active timer with this id, or with this dedup key (a schedule's timer changes id each time it fires). */
    async activeTimer(id: string, dedupKey: string): Promise<ActiveTimer | undefined> {
      const row = await db
        .selectFrom('timers')
        .selectAll()
        .where((eb) => eb.or([eb.and([eb('id', '=', id), eb('status', 'in', ACTIVE)]), activeByKey(eb, dedupKey)]))
        .executeTakeFirst();
      return row && toActiveTimer(row);
    },

    /**
     * Ends a `POST /schedule` series: its pending row and a row firing right now, whose handler
     * then neither sends nor arms the next (it checks its row in its transaction). How many rows.
     */
    async cancelSeries(dedupKey: string, at: Date): Promise<number> {
      const result = await db
        .updateTable('timers')
        .set({ status: 'cancelled', lease_until: null, updated_at: toMs(at) })
        .where((eb) => activeByKey(eb, dedupKey))
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
  };
}

function toActiveTimer(row: Selectable<TimersTable>): ActiveTimer {
  return {
    id: row.id,
    kind: row.kind,
    conversationId: row.conversation_id,
    participantId: row.participant_id,
    dedupKey: row.dedup_key,
    dueAt: fromMs(row.due_at),
    payload: JSON.parse(row.payload) as unknown,
    createdAt: fromMs(row.created_at),
  };
}

export type PlatformQueries = ReturnType<typeof platformQueries>;
