import { sql, type Insertable, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Conversation, Participant } from '../core/domain.ts';
import { earlierInbox, inboxQueries, inboxRow } from './inbox-queries.ts';
import type { FlowContextRead, StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { ConversationsTable, Database, InboxTable, MessagesTable, ParticipantsTable } from './schema.ts';
import { messageQueries, toMessage } from './messages-queries.ts';
import { prepared, PreparedFamily } from './prepared.ts';
import type { SqlDialect } from './query-context.ts';
import { toConversation } from './conversations-queries.ts';
import { toParticipant } from './participants-queries.ts';

type ContextOperations = Pick<
  StoreOperations,
  'getConversationWithParticipant' | 'getTurnContext' | 'findSenderByPhone' | 'recordForSender'
>;

/** The participant's columns, read next to a conversation's as `p_<column>`. */
const PARTICIPANT_COLUMNS = [
  'id',
  'ordinal',
  'phone_number',
  'name',
  'gender',
  'ethnicity',
  'background',
  'timezone',
  'status',
  'cohort',
  'debug',
  'enrolled_at',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof ParticipantsTable>;
const participantColumns = PARTICIPANT_COLUMNS.map((column) => `p.${column} as p_${column}`) as never[];

type Joined = Selectable<ConversationsTable> & Record<`p_${(typeof PARTICIPANT_COLUMNS)[number]}`, unknown>;

const conversationById = prepared((db, a: { id: string }) =>
  db
    .selectFrom('conversations as c')
    .leftJoin('participants as p', 'p.id', 'c.participant_id')
    .selectAll('c')
    .select(participantColumns)
    .where('c.id', '=', a.id),
);
/** The conversation's highest message seq, system notes included (0 for none): one probe of its primary key. */
const lastSeq = (id: unknown) =>
  sql<number>`(select coalesce(max(seq), 0) from messages where conversation_id = ${id})`;
const lastSeqOf = (id: unknown) => lastSeq(id).as('last_seq');
/** The flows' context reads as columns `f<read>_<name>`, each evaluated only for its flow's conversations. */
function flowColumns(reads: readonly FlowContextRead[], dialect: SqlDialect) {
  return reads.flatMap((read, index) =>
    Object.entries(read.columns(dialect, sql.ref('p.id'))).map(([name, column]) =>
      sql`case when c.flow = ${read.flow} then ${column} end`.as(`f${index}_${name}`),
    ),
  );
}
/** Each read's column names, as the read names them (`flowColumns` selects them prefixed). */
const readNames = new WeakMap<FlowContextRead, string[]>();
/** The columns of the conversation's own flow in a turn context row, by name. */
function flowColumnsOf(row: Record<string, unknown>, flow: string, reads: readonly FlowContextRead[]) {
  const index = reads.findIndex((read) => read.flow === flow);
  if (index < 0) return undefined;
  const read = reads[index]!;
  let names = readNames.get(read);
  if (!names) readNames.set(read, (names = Object.keys(read.columns('sqlite', sql.ref('p.id')))));
  const own: Record<string, unknown> = {};
  for (const name of names) own[name] = row[`f${index}_${name}`];
  return own;
}
/**
 * A turn's context in one statement: the conversation, its participant, its last seq and the
 * flows' own reads; on PostgreSQL its recent history as JSON too, unless it is the one the caller
 * knows (`known`: the last seq it knows the history at, or null). SQLite reads the history on its
 * own when it needs it: its row mapping is cheaper than JSON (decision 020). One statement per set
 * of flows' reads.
 */
const turnContext = new PreparedFamily(({ reads }: { reads: readonly FlowContextRead[] }) =>
  prepared((db, a: { id: string; limit: number; known: number | null }, dialect) => {
    const query = db
      .selectFrom('conversations as c')
      .leftJoin('participants as p', 'p.id', 'c.participant_id')
      .selectAll('c')
      .select(participantColumns)
      .select(lastSeqOf(a.id))
      .select(flowColumns(reads, dialect))
      .where('c.id', '=', a.id);
    if (dialect === 'sqlite') return query;
    return query.select(
      sql<Selectable<MessagesTable>[] | null>`case when ${lastSeq(a.id)} is not distinct from ${a.known}::bigint
        then null
        else (select coalesce(json_agg(m order by m.seq), '[]'::json) from (
          select * from messages where conversation_id = ${a.id} and role <> 'system' order by seq desc limit ${a.limit}
        ) m) end`.as('history'),
    );
  }),
);
// One conversation per participant in practice; the oldest one wins if there are more.
const senderQuery = (db: Kysely<Database>, phone: unknown) =>
  db
    .selectFrom('participants as p')
    .leftJoin('conversations as c', 'c.participant_id', 'p.id')
    .selectAll('c')
    .select(participantColumns)
    .where('p.phone_number', '=', phone as string)
    .orderBy('c.created_at')
    .orderBy('c.id')
    .limit(1);
const senderByPhone = prepared((db, a: { phone: string }) => senderQuery(db, a.phone));

/** The inbox columns `recordFor` writes, each from a parameter but the two the sender's row gives. */
const RECORDED_COLUMNS = [
  'id',
  'channel',
  'channel_message_id',
  'sender',
  'text',
  'status',
  'error',
  'received_at',
  'processed_at',
  'trace_parent',
] as const satisfies ReadonlyArray<keyof InboxTable>;
type RecordedRow = Pick<Insertable<InboxTable>, (typeof RECORDED_COLUMNS)[number]>;

type RecordArgs = RecordedRow & {
  phone: string;
  participantId: string;
  conversationId: string;
  flow: string;
  onChannel: string | null;
};

/**
 * The inbox row as `insertInbox` writes it (a duplicate writes nothing), for the participant and
 * conversation `from` gives when `condition` holds: its id and whether it is `behind` an earlier
 * pending item of its conversation.
 */
function recordedInsert(
  a: RecordArgs,
  who: RawBuilder<unknown>,
  from: RawBuilder<unknown>,
  condition: RawBuilder<boolean>,
) {
  const columns = sql.join(RECORDED_COLUMNS.map((column) => sql.ref(column)));
  const values = sql.join(RECORDED_COLUMNS.map((column) => sql`${a[column]}`));
  return sql`insert into inbox (${columns}, participant_id, conversation_id)
    select ${values}, ${who} ${from} where ${condition}
    on conflict (channel, sender, channel_message_id) do nothing
    returning id, exists (select 1 from inbox as earlier where earlier.conversation_id = inbox.conversation_id
      and earlier.status = 'pending' and earlier.ordinal < inbox.ordinal) as behind`;
}

/**
 * PostgreSQL: the sender by their phone number (`senderByPhone`) and, in the same statement, the
 * inbox row if the sender is the one it was made for (`matches`): one round trip for what is
 * otherwise a read, then an insert that depends on it. The answer says whether it matched and
 * what was written.
 */
const recordFor = prepared((db, a: RecordArgs) => {
  const matches = sql<boolean>`s.p_id = ${a.participantId} and s.p_status = 'active' and s.id = ${a.conversationId}
    and s.flow = ${a.flow} and (${a.onChannel}::text is null or s.channel = ${a.onChannel}::text)`;
  const insert = recordedInsert(a, sql`s.p_id, s.id`, sql`from s`, matches);
  return {
    compile: () =>
      sql`with s as (${senderQuery(db, a.phone)}), recorded as (${insert})
        select s.*, coalesce((select ${matches} from s), false) as matched,
          recorded.id as recorded_id, recorded.behind as recorded_behind
        from (select 1) as one left join s on true left join recorded on true`.compile(db),
  };
});

/**
 * SQLite: the inbox row, written only if the phone number is still the sender it was made for
 * (the one `senderByPhone` reads: their oldest conversation), and they are still active. No row
 * back: a duplicate, someone else, or paused since; the caller reads the sender then (decision 020).
 */
const recordForSqlite = prepared((db, a: RecordArgs) => {
  const still = sql<boolean>`exists (select 1 from participants as p join conversations as c on c.participant_id = p.id
    where p.phone_number = ${a.phone} and p.id = ${a.participantId} and p.status = 'active'
      and c.id = ${a.conversationId} and c.flow = ${a.flow} and (${a.onChannel} is null or c.channel = ${a.onChannel})
      and c.id = (select first.id from conversations as first where first.participant_id = p.id
        order by first.created_at, first.id limit 1))`;
  const insert = recordedInsert(a, sql`${a.participantId}, ${a.conversationId}`, sql``, still);
  return { compile: () => insert.compile(db) };
});

/** Each participant column and the name it is read under next to a conversation's. */
const PREFIXED_COLUMNS = PARTICIPANT_COLUMNS.map((column) => [column, `p_${column}` as const] as const);

function participantOf(row: Joined): ReturnType<typeof toParticipant> | null {
  if (row.p_id === null) return null;
  const fields: Record<string, unknown> = {};
  for (const [column, prefixed] of PREFIXED_COLUMNS) fields[column] = row[prefixed];
  return toParticipant(fields as Selectable<ParticipantsTable>);
}

/** A sender's row as their participant and conversation (none when the row has no participant). */
function senderOf(row: Joined): { participant: Participant; conversation: Conversation | undefined } | undefined {
  const participant = participantOf(row);
  if (!participant) return undefined;
  return { participant, conversation: row.id === null ? undefined : toConversation(row) };
}

/**
 * The reads a turn and an inbound message start with, one statement each (decision 020): a
 * conversation with its participant, and a sender's participant with their conversation.
 */
export function contextQueries(ctx: QueryContext): ContextOperations {
  const messages = messageQueries(ctx);
  const findSenderByPhone: ContextOperations['findSenderByPhone'] = async (phoneNumber) => {
    const row = (await senderByPhone.first(ctx, { phone: phoneNumber })) as Joined | undefined;
    return row && senderOf(row);
  };
  const getConversationWithParticipant: ContextOperations['getConversationWithParticipant'] = async (id) => {
    const row = (await conversationById.first(ctx, { id })) as Joined | undefined;
    return row && { conversation: toConversation(row), participant: participantOf(row) };
  };
  return {
    getConversationWithParticipant,

    async getTurnContext(conversationId, historyLimit, reads = [], knownThrough) {
      const known = knownThrough ?? null;
      const row = (await turnContext.of({ reads }).first(ctx, { id: conversationId, limit: historyLimit, known })) as
        (Joined & { history?: Selectable<MessagesTable>[] | null; last_seq: number | string }) | undefined;
      if (!row) return undefined;
      const lastSeq = Number(row.last_seq);
      const history =
        lastSeq === known
          ? null
          : row.history
            ? row.history.map(toMessage)
            : await messages.listMessages(conversationId, { limit: historyLimit, withoutSystem: true });
      const own = flowColumnsOf(row, row.flow, reads);
      return {
        conversation: toConversation(row),
        participant: participantOf(row),
        history,
        lastSeq,
        ...(own ? { flowColumns: own } : {}),
      };
    },

    async recordForSender(phoneNumber, item, expected) {
      if (!item.participantId || !item.conversationId)
        throw new Error('recordForSender needs an item for a conversation');
      const { participant_id: _participant, conversation_id: _conversation, ...row } = inboxRow(item);
      const args = {
        ...(row as RecordedRow),
        phone: phoneNumber,
        participantId: item.participantId,
        conversationId: item.conversationId,
        flow: expected.flow,
        onChannel: expected.channel ?? null,
      };
      if (ctx.dialect === 'sqlite') {
        const inserted = (await recordForSqlite.first(ctx, args)) as { behind: number } | undefined;
        if (inserted) return { recorded: { item: { ...item }, duplicate: false, behind: Boolean(inserted.behind) } };
        // Nothing written: a redelivery of this sender's message, or the number is someone else now.
        const sender = await findSenderByPhone(phoneNumber);
        const matched =
          sender?.participant.id === item.participantId &&
          sender.participant.status === 'active' &&
          sender.conversation?.id === item.conversationId &&
          sender.conversation.flow === expected.flow &&
          (expected.channel === undefined || sender.conversation.channel === expected.channel);
        if (!matched) return { sender };
        // Theirs after all: a redelivery, or the sender changed and changed back between the two
        // statements (then nothing was written yet, and this writes it).
        const again = await inboxQueries(ctx).insertInbox(item);
        if (again.duplicate) return { sender, recorded: { item: again.item, duplicate: true } };
        return { recorded: { item: again.item, duplicate: false, behind: Boolean(again.behind) } };
      }
      const answer = (await recordFor.first(ctx, args)) as
        (Joined & { matched: boolean; recorded_id: string | null; recorded_behind: boolean | null }) | undefined;
      const sender = answer && senderOf(answer);
      if (!answer?.matched) return { sender };
      if (answer.recorded_id === null)
        return { sender, recorded: { item: await earlierInbox(ctx, item), duplicate: true } };
      return { recorded: { item: { ...item }, duplicate: false, behind: Boolean(answer.recorded_behind) } };
    },

    findSenderByPhone,
  };
}
