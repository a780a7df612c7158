import { sql, type Selectable } from 'kysely';
import type { Message, MessageKind, MessageRole, MessageSource, NewMessage } from '../core/domain.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { MessagesTable } from './schema.ts';
import { fromMs, oneOf, pollFromText, pollToText, toMs } from './codec.ts';
import { lockConversation } from './conversation-lock.ts';
import { prepared, PreparedFamily, preparedInsert } from './prepared.ts';

type MessageOperations = Pick<StoreOperations, 'appendMessages' | 'listMessages'>;

const ROLES = ['user', 'assistant', 'system'] as const satisfies readonly MessageRole[];
const KINDS = ['text', 'poll'] as const satisfies readonly MessageKind[];
const SOURCES = [
  'participant',
  'model',
  'timer',
  'schedule',
  'operator',
  'system',
] as const satisfies readonly MessageSource[];

const lastSeq = prepared((db, a: { conversationId: string }) =>
  db
    .selectFrom('messages')
    .select((eb) => eb.fn.max('seq').as('last'))
    .where('conversation_id', '=', a.conversationId),
);
const insertMessages = preparedInsert('messages');
const COLUMNS = ['id', 'role', 'kind', 'text', 'poll', 'source', 'turn_id', 'created_at'] as const;
/**
 * One conversation's messages in one statement, numbered after its last seq there and then (an
 * uncorrelated subquery, evaluated once, before any row is written). SQLite: the transaction is
 * the store's only writer; PostgreSQL: the caller holds the conversation's row lock, so appends to
 * it take turns. Returns each id with its seq. `created_at` is cast: PostgreSQL reads untyped
 * VALUES as text.
 */
const appendNumbered = new PreparedFamily((count: number) =>
  prepared((db, a: Record<string, unknown>) => ({
    compile: () => {
      const value = (row: number, column: (typeof COLUMNS)[number]) =>
        column === 'created_at' ? sql`cast(${a[`${row}:${column}`]} as bigint)` : sql`${a[`${row}:${column}`]}`;
      const rows = Array.from(
        { length: count },
        (_, row) => sql`(${sql.join([sql.lit(row + 1), ...COLUMNS.map((column) => value(row, column))])})`,
      );
      const lastSeq = sql`(select coalesce(max(seq), 0) from messages where conversation_id = ${a.conversationId})`;
      return sql`insert into messages (conversation_id, seq, ${sql.join(COLUMNS.map((column) => sql.ref(column)))})
        select ${a.conversationId}, ${lastSeq} + column1,
          ${sql.join(COLUMNS.map((_, index) => sql.ref(`column${index + 2}`)))}
        from (values ${sql.join(rows)}) as v returning id, seq`.compile(db);
    },
  })),
);
/**
 * One conversation's messages at the seqs their caller numbered them with (decision 020); a seq
 * already taken writes nothing for that row, which the fence (every row written) turns into
 * `FenceFailed('transcript')`.
 */
const insertAtSeqs = new PreparedFamily((count: number) =>
  prepared((db, a: Record<string, unknown>) =>
    db
      .insertInto('messages')
      .values(
        Array.from({ length: count }, (_, row) => ({
          conversation_id: a.conversationId as string,
          seq: a[`${row}:seq`] as number,
          ...(Object.fromEntries(COLUMNS.map((column) => [column, a[`${row}:${column}`]])) as Record<
            (typeof COLUMNS)[number],
            never
          >),
        })),
      )
      .onConflict((oc) => oc.columns(['conversation_id', 'seq']).doNothing())
      .returning(sql<number>`1`.as('one')),
  ),
);
type ListShape = { after: boolean; withoutSystem: boolean; limited: boolean };
const listFamily = new PreparedFamily((shape: ListShape) =>
  prepared((db, a: { conversationId: string; afterSeq: number; limit: number }) => {
    let query = db
      .selectFrom('messages')
      .selectAll()
      .where('conversation_id', '=', a.conversationId)
      .orderBy('seq', 'desc');
    if (shape.after) query = query.where('seq', '>', a.afterSeq);
    if (shape.withoutSystem) query = query.where('role', '!=', 'system');
    return shape.limited ? query.limit(a.limit) : query;
  }),
);

/** The arguments of `appendNumbered` and `insertAtSeqs`: each row's columns as `row:column`. */
function rowArgs(conversationId: string, messages: readonly NewMessage[]): Record<string, unknown> {
  const args: Record<string, unknown> = { conversationId };
  messages.forEach((m, row) => {
    const values = { ...m, poll: pollToText(m.poll), turn_id: m.turnId, created_at: toMs(m.createdAt) };
    for (const column of COLUMNS) args[`${row}:${column}`] = values[column as keyof typeof values];
  });
  return args;
}

/** One conversation's messages in one statement (the caller holds what `appendNumbered` needs). */
async function appendToOne(ctx: QueryContext, conversationId: string, messages: NewMessage[]): Promise<Message[]> {
  const args = rowArgs(conversationId, messages);
  const seqs = new Map(
    (await appendNumbered.of(messages.length).rows(ctx, args)).map((row) => {
      const { id, seq } = row as { id: string; seq: number | string };
      return [id, Number(seq)];
    }),
  );
  return messages.map((m) => ({ ...m, seq: seqs.get(m.id)! }));
}

/**
 * One conversation's messages at seqs after `after`, without waiting for an answer: the rows are
 * known before they are written. PostgreSQL: the conversation's row lock still goes first, so an
 * append numbered by the database waits for this one and then numbers after it.
 */
async function appendAfter(ctx: QueryContext, conversationId: string, messages: NewMessage[], after: number) {
  const stored = messages.map((m, index) => ({ ...m, seq: after + index + 1 }));
  const args = rowArgs(conversationId, messages);
  stored.forEach((m, row) => (args[`${row}:seq`] = m.seq));
  await ctx.atomic(async (ctx) => {
    if (ctx.dialect === 'postgres') await lockConversation(ctx, conversationId);
    await insertAtSeqs.of(messages.length).fenced(ctx, args, 'transcript', messages.length);
  });
  return stored;
}

export function messageQueries(ctx: QueryContext): MessageOperations {
  return {
    async appendMessages(messages, numbered) {
      if (messages.length === 0) return [];
      const conversationId = messages[0]!.conversationId;
      if (numbered) {
        if (messages.some((m) => m.conversationId !== conversationId))
          throw new Error('appendMessages: messages numbered by the caller must belong to one conversation');
        return appendAfter(ctx, conversationId, messages, numbered.after);
      }
      if (messages.every((m) => m.conversationId === conversationId)) {
        if (ctx.dialect === 'sqlite') return appendToOne(ctx, conversationId, messages);
        return ctx.atomic(async (ctx) => {
          await lockConversation(ctx, conversationId);
          return appendToOne(ctx, conversationId, messages);
        });
      }
      return ctx.atomic(async (ctx) => {
        const { dialect } = ctx;
        // Conversations in a fixed order, so two appends touching the same ones cannot deadlock.
        const conversationIds = [...new Set(messages.map((m) => m.conversationId))].sort();
        const next = new Map<string, number>();
        for (const conversationId of conversationIds) {
          if (dialect === 'postgres') await lockConversation(ctx, conversationId);
          // SQLite needs no lock: the transaction is BEGIN IMMEDIATE on the store's only connection.
          const last = (await lastSeq.first(ctx, { conversationId }))?.last;
          next.set(conversationId, Number(last ?? 0) + 1);
        }
        const stored: Message[] = messages.map((m) => {
          const seq = next.get(m.conversationId)!;
          next.set(m.conversationId, seq + 1);
          return { ...m, seq };
        });
        await insertMessages(
          ctx,
          stored.map((m) => ({
            conversation_id: m.conversationId,
            seq: m.seq,
            id: m.id,
            role: m.role,
            kind: m.kind,
            text: m.text,
            poll: pollToText(m.poll),
            source: m.source,
            turn_id: m.turnId,
            created_at: toMs(m.createdAt),
          })),
        );
        return stored;
      });
    },

    async listMessages(conversationId, options = {}) {
      const shape = {
        after: options.afterSeq !== undefined,
        withoutSystem: options.withoutSystem === true,
        limited: options.limit !== undefined,
      };
      const rows = await listFamily
        .of(shape)
        .rows(ctx, { conversationId, afterSeq: options.afterSeq ?? 0, limit: Math.max(0, options.limit ?? 0) });
      return rows.reverse().map(toMessage);
    },
  };
}

export function toMessage(row: Selectable<MessagesTable>): Message {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    seq: Number(row.seq),
    role: oneOf(ROLES, row.role, 'message role'),
    kind: oneOf(KINDS, row.kind, 'message kind'),
    text: row.text,
    poll: pollFromText(row.poll),
    source: oneOf(SOURCES, row.source, 'message source'),
    turnId: row.turn_id,
    createdAt: fromMs(row.created_at),
  };
}
