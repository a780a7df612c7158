import { sql } from 'kysely';
import type { Message } from '../../core/domain.ts';
import { fromMs, fromMsOrNull, toMs } from '../../store/codec.ts';
import { toMessage } from '../../store/messages-queries.ts';
import { DAILY_PROMPT } from './timers/daily-prompt-timer.ts';
import type { QueryContext } from '../../store/query-context.ts';

/** One participant of the study as the overview reads them: one row each, one query for all. */
export interface StudyRow {
  id: string;
  name: string | null;
  phoneNumber: string;
  timezone: string | null;
  status: string;
  cohort: string | null;
  enrolledAt: Date;
  subState: string | null;
  lastPromptAt: Date | null;
  lastReplyAt: Date | null;
  /** The participant's messages since `since`. */
  recentReplies: number;
  /** Deliveries that failed for good since `since`. */
  recentFailedDeliveries: number;
  /** A channel contact of theirs opted out (SMS or WhatsApp STOP) and has not opted back in. */
  optedOut: boolean;
}

export interface StudyFilter {
  status?: string | undefined;
  cohort?: string | undefined;
}

/** The habit coach's study queries: a store extension of its module (decision 019). */
export function studyQueries({ db }: QueryContext) {
  return {
    /**
     * What adherence is read from, per participant (id → transcript in seq order): their own
     * messages and the polls sent to them. One query for the whole study.
     */
    async adherenceMessages(filter: StudyFilter): Promise<Map<string, Message[]>> {
      let query = db
        .selectFrom('messages as m')
        .innerJoin('conversations as c', 'c.id', 'm.conversation_id')
        .innerJoin('participants as p', 'p.id', 'c.participant_id')
        .selectAll('m')
        .select('p.id as participant_id')
        .where((eb) => eb.or([eb('m.role', '=', 'user'), eb('m.kind', '=', 'poll')]))
        .orderBy('m.conversation_id')
        .orderBy('m.seq');
      if (filter.status) query = query.where('p.status', '=', filter.status);
      if (filter.cohort) query = query.where('p.cohort', '=', filter.cohort);
      const transcripts = new Map<string, Message[]>();
      for (const { participant_id: participantId, ...row } of await query.execute()) {
        const transcript = transcripts.get(participantId) ?? [];
        transcript.push(toMessage(row));
        transcripts.set(participantId, transcript);
      }
      return transcripts;
    },

    /**
     * When each daily prompt of a conversation was due, keyed by when it was sent (epoch ms): the
     * prompt timer completes at the instant its messages are written.
     */
    async promptTimers(conversationId: string): Promise<Map<number, Date>> {
      const rows = await db
        .selectFrom('timers')
        .select(['due_at', 'updated_at'])
        .where('conversation_id', '=', conversationId)
        .where('kind', '=', DAILY_PROMPT.kind)
        .where('status', '=', 'done')
        .execute();
      return new Map(rows.map((row) => [Number(row.updated_at), fromMs(row.due_at)]));
    },

    async studyRows(filter: StudyFilter, since: Date): Promise<StudyRow[]> {
      const sinceMs = toMs(since);
      let query = db
        .selectFrom('participants as p')
        .leftJoin('conversations as c', 'c.participant_id', 'p.id')
        .leftJoin('profiles as pr', 'pr.participant_id', 'p.id')
        .select([
          'p.id',
          'p.name',
          'p.phone_number',
          'p.timezone',
          'p.status',
          'p.cohort',
          'p.enrolled_at',
          'c.sub_state',
          'pr.last_prompt_sent_at',
          sql<
            number | null
          >`(select max(m.created_at) from messages m where m.conversation_id = c.id and m.role = 'user')`.as(
            'last_reply_at',
          ),
          sql<number>`(select count(*) from messages m
                        where m.conversation_id = c.id and m.role = 'user' and m.created_at >= ${sinceMs})`.as(
            'recent_replies',
          ),
          sql<number>`(select count(*) from outbox o
                        where o.conversation_id = c.id and o.status = 'failed' and o.created_at >= ${sinceMs})`.as(
            'recent_failed',
          ),
          // The contacts the channel gate would look at: linked to them, or (an opt-out a provider
          // reported before they ever wrote) keyed by their phone number, E.164 (Twilio) or digits (WhatsApp).
          sql<number>`(select count(*) from channel_contacts cc
                        where cc.opted_out_at is not null
                          and (cc.participant_id = p.id
                               or (cc.participant_id is null
                                   and cc.contact_id in (p.phone_number, substr(p.phone_number, 2)))))`.as(
            'opted_out_contacts',
          ),
        ])
        .orderBy('p.enrolled_at')
        .orderBy('p.ordinal');
      if (filter.status) query = query.where('p.status', '=', filter.status);
      if (filter.cohort) query = query.where('p.cohort', '=', filter.cohort);
      return (await query.execute()).map((row) => ({
        id: row.id,
        name: row.name,
        phoneNumber: row.phone_number,
        timezone: row.timezone,
        status: row.status,
        cohort: row.cohort,
        enrolledAt: fromMs(row.enrolled_at),
        subState: row.sub_state,
        lastPromptAt: fromMsOrNull(row.last_prompt_sent_at),
        lastReplyAt: fromMsOrNull(row.last_reply_at),
        recentReplies: Number(row.recent_replies),
        recentFailedDeliveries: Number(row.recent_failed),
        optedOut: Number(row.opted_out_contacts) > 0,
      }));
    },
  };
}

export type StudyQueries = ReturnType<typeof studyQueries>;
