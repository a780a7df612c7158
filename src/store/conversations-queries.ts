import { sql, type Selectable } from 'kysely';
import type { Conversation } from '../core/domain.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { ConversationsTable } from './schema.ts';
import { fromMs, toMs } from './codec.ts';
import { prepared, PreparedFamily } from './prepared.ts';

type ConversationOperations = Pick<
  StoreOperations,
  | 'insertConversation'
  | 'getConversation'
  | 'findConversationByParticipant'
  | 'getSessionCaller'
  | 'saveSessionCaller'
  | 'listSessions'
  | 'updateConversation'
  | 'updateConversationFenced'
  | 'setConversationChannel'
>;

type PatchShape = { state: boolean; subState: boolean; participantId: boolean };
type PatchArgs = { id: string; version: number; state: string; subState: string; participantId: string; now: number };
/** A conversation's compare-and-set as a fence, one statement per shape of patch. */
const patchFenced = new PreparedFamily((shape: PatchShape) =>
  prepared((db, a: PatchArgs) =>
    db
      .updateTable('conversations')
      .set((eb) => ({
        ...(shape.state ? { state: a.state } : {}),
        ...(shape.subState ? { sub_state: a.subState } : {}),
        ...(shape.participantId ? { participant_id: a.participantId } : {}),
        version: eb('version', '+', 1),
        updated_at: a.now,
      }))
      .where('id', '=', a.id)
      .where('version', '=', a.version)
      .returning(sql<number>`1`.as('one')),
  ),
);

const byId = prepared((db, a: { id: string }) => db.selectFrom('conversations').selectAll().where('id', '=', a.id));
// One conversation per participant in practice; the oldest one wins if there are more.
const byParticipant = prepared((db, a: { participantId: string }) =>
  db
    .selectFrom('conversations')
    .selectAll()
    .where('participant_id', '=', a.participantId)
    .orderBy('created_at')
    .orderBy('id')
    .limit(1),
);

export function conversationQueries(ctx: QueryContext): ConversationOperations {
  const { db } = ctx;
  return {
    async insertConversation(c, options = {}) {
      await db
        .insertInto('conversations')
        .values({
          id: c.id,
          participant_id: c.participantId,
          channel: c.channel,
          flow: c.flow,
          state: c.state,
          sub_state: c.subState,
          version: c.version,
          created_at: toMs(c.createdAt),
          updated_at: toMs(c.updatedAt),
          transcript_search: options.transcriptSearch ?? true,
        })
        .execute();
    },

    async getConversation(id) {
      const row = await byId.first(ctx, { id });
      return row && toConversation(row);
    },

    async listSessions(filter) {
      let query = db.selectFrom('conversations as c').where('c.participant_id', 'is', null);
      if (filter.flow) query = query.where('c.flow', '=', filter.flow);
      const [rows, count] = await Promise.all([
        query
          .selectAll('c')
          .select(
            sql<number | null>`(select max(m.created_at) from messages m where m.conversation_id = c.id)`.as(
              'last_message_at',
            ),
          )
          .orderBy('c.created_at', 'desc')
          // Ids sort by the millisecond they were made in (`timeOrderedIds`): a tie of `created_at` (a
          // virtual clock) still lists the newest first, to the millisecond.
          .orderBy('c.id', 'desc')
          .limit(filter.limit)
          .offset(filter.offset)
          .execute(),
        query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
      ]);
      const sessions = rows.map((row) => ({
        ...toConversation(row),
        lastActivityAt: fromMs(row.last_message_at ?? row.created_at),
      }));
      return { sessions, total: Number(count.n) };
    },

    async findConversationByParticipant(participantId) {
      const row = await byParticipant.first(ctx, { participantId });
      return row && toConversation(row);
    },

    async getSessionCaller(conversationId) {
      const row = await db
        .selectFrom('session_callers')
        .select(['phone', 'person'])
        .where('conversation_id', '=', conversationId)
        .executeTakeFirst();
      return row && { phone: row.phone, person: row.person };
    },

    async saveSessionCaller(conversationId, caller, now) {
      const given = {
        ...(caller.phone !== undefined ? { phone: caller.phone } : {}),
        ...(caller.person !== undefined ? { person: caller.person } : {}),
      };
      await db
        .insertInto('session_callers')
        .values({ conversation_id: conversationId, phone: null, person: null, ...given, updated_at: toMs(now) })
        .onConflict((oc) => oc.column('conversation_id').doUpdateSet({ ...given, updated_at: toMs(now) }))
        .execute();
    },

    async setConversationChannel(id, channel, now) {
      await db
        .updateTable('conversations')
        .set({ channel, updated_at: toMs(now) })
        .where('id', '=', id)
        .where('channel', '<>', channel)
        .execute();
    },

    async updateConversationFenced(id, version, patch, now) {
      const shape = {
        state: patch.state !== undefined,
        subState: patch.subState !== undefined,
        participantId: patch.participantId !== undefined,
      };
      const args = { id, version, now: toMs(now), ...patch } as PatchArgs;
      await patchFenced.of(shape).fenced(ctx, args, 'version');
    },

    async updateConversation(id, expectedVersion, patch, now) {
      // Compare-and-set in one statement: the version check and the write cannot be split.
      const row = await db
        .updateTable('conversations')
        .set((eb) => ({
          state: patch.state,
          sub_state: patch.subState,
          participant_id: patch.participantId,
          version: eb('version', '+', 1),
          updated_at: toMs(now),
        }))
        .where('id', '=', id)
        .where('version', '=', expectedVersion)
        .returningAll()
        .executeTakeFirst();
      return row && toConversation(row);
    },
  };
}

export function toConversation(row: Selectable<ConversationsTable>): Conversation {
  return {
    id: row.id,
    participantId: row.participant_id,
    channel: row.channel,
    flow: row.flow,
    state: row.state,
    subState: row.sub_state,
    version: Number(row.version),
    createdAt: fromMs(row.created_at),
    updatedAt: fromMs(row.updated_at),
  };
}
