import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { MemoryScope, Note } from '../core/domain.ts';
import type { SearchOperation, StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { MessagesTable } from './schema.ts';
import { fromMs, toMs } from './codec.ts';
import { toMessage } from './messages-queries.ts';

type SearchOperations = Pick<StoreOperations, SearchOperation>;

/** Words of the keywords, for an any-word match; punctuation is dropped so it never reaches a query language. */
export function searchWords(keywords: string[]): string[] {
  // Marks belong to their letters: "नमस्ते" is one word, not "नमस" and "त".
  const words = keywords.flatMap((keyword) => keyword.toLowerCase().match(/[\p{L}\p{M}\p{N}]+/gu) ?? []);
  return [...new Set(words)].slice(0, 32);
}

/**
 * The conversations a recall reads (decision 006): those of the scope's person (their
 * participant's, and web sessions for them) or the one conversation when nobody is known; only
 * conversations whose flow searches its transcript (`transcript_search`), so a person's habit
 * coaching is never recalled by their assistant.
 */
function scopeConversations(scope: MemoryScope): RawBuilder<unknown> {
  if (scope.person === null)
    return sql`select id from conversations where id = ${scope.conversationId} and transcript_search`;
  return sql`select id from conversations where transcript_search and (id = ${scope.conversationId}
    or participant_id = ${scope.person}
    or id in (select conversation_id from session_callers where person = ${scope.person}))`;
}

/** Notes of the person, or of the conversation when nobody is known. */
const ownedBy = (scope: MemoryScope) =>
  scope.person === null
    ? sql<boolean>`conversation_id = ${scope.conversationId} and person is null`
    : sql<boolean>`person = ${scope.person}`;

export function searchQueries(ctx: QueryContext): SearchOperations {
  const { db } = ctx;
  return {
    async searchMessages(scope, search) {
      const words = searchWords(search.keywords);
      if (words.length === 0 || search.limit <= 0) return [];
      const from = search.from ? toMs(search.from) : Number.MIN_SAFE_INTEGER;
      const to = search.to ? toMs(search.to) : Number.MAX_SAFE_INTEGER;
      const rows =
        ctx.dialect === 'postgres'
          ? await searchPostgres(ctx, scope, words, from, to, search.limit)
          : await searchSqlite(ctx, scope, words, from, to, search.limit);
      return rows.map(toMessage);
    },

    async listNotes(scope) {
      const result = await sql<NoteRow>`select * from assistant_notes where ${ownedBy(scope)}
        order by created_at, id`.execute(db);
      return result.rows.map(toNote);
    },

    async addNote(note) {
      await db
        .insertInto('assistant_notes')
        .values({
          id: note.id,
          conversation_id: note.conversationId,
          person: note.person,
          text: note.text,
          created_at: toMs(note.createdAt),
        })
        .execute();
    },

    async deleteNote(scope, noteId) {
      const result = await db
        .deleteFrom('assistant_notes')
        .where(ownedBy(scope))
        .where('id', '=', noteId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async messagesWithoutEmbedding(scope, model, limit) {
      if (limit <= 0) return [];
      const result = await sql<Row>`select m.* from messages m
        where m.conversation_id in (${scopeConversations(scope)}) and m.role in ('user', 'assistant')
          and not exists (select 1 from message_embeddings e
            where e.conversation_id = m.conversation_id and e.model = ${model} and e.seq = m.seq)
        order by m.created_at desc, m.seq desc limit ${limit}`.execute(db);
      return result.rows.map(toMessage);
    },

    async saveEmbeddings(model, embeddings, now) {
      if (embeddings.length === 0) return;
      await db
        .insertInto('message_embeddings')
        .values(
          embeddings.map((embedding) => ({
            conversation_id: embedding.conversationId,
            seq: embedding.seq,
            model,
            vector: encodeVector(embedding.vector),
            created_at: toMs(now),
          })),
        )
        .onConflict((oc) => oc.columns(['conversation_id', 'model', 'seq']).doNothing())
        .execute();
    },

    async listEmbeddings(scope, model, search) {
      if (search.limit <= 0) return [];
      const from = search.from ? toMs(search.from) : Number.MIN_SAFE_INTEGER;
      const to = search.to ? toMs(search.to) : Number.MAX_SAFE_INTEGER;
      const result = await sql<Row & { vector: string }>`select m.*, e.vector from message_embeddings e
        join messages m on m.conversation_id = e.conversation_id and m.seq = e.seq
        where e.conversation_id in (${scopeConversations(scope)}) and e.model = ${model}
          and m.created_at >= ${from} and m.created_at <= ${to}
        order by m.created_at desc, m.seq desc limit ${search.limit}`.execute(db);
      return result.rows.map((row) => ({ message: toMessage(row), vector: decodeVector(row.vector) }));
    },
  };
}

type Row = Selectable<MessagesTable>;
type NoteRow = { id: string; conversation_id: string; person: string | null; text: string; created_at: number };

const toNote = (row: NoteRow): Note => ({
  id: row.id,
  conversationId: row.conversation_id,
  person: row.person,
  text: row.text,
  createdAt: fromMs(row.created_at),
});

/** A vector as text both dialects keep alike: base64 of its float32 values, little-endian. */
export function encodeVector(vector: Float32Array): string {
  const bytes = new DataView(new ArrayBuffer(vector.length * 4));
  vector.forEach((value, index) => bytes.setFloat32(index * 4, value, true));
  return Buffer.from(bytes.buffer).toString('base64');
}

export function decodeVector(text: string): Float32Array {
  const buffer = Buffer.from(text, 'base64');
  const bytes = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  return Float32Array.from({ length: Math.floor(buffer.byteLength / 4) }, (_, index) =>
    bytes.getFloat32(index * 4, true),
  );
}

async function searchSqlite(
  ctx: QueryContext,
  scope: MemoryScope,
  words: string[],
  from: number,
  to: number,
  limit: number,
): Promise<Row[]> {
  const match = words.map((word) => `"${word}"`).join(' OR ');
  const result = await sql<Row>`
    select m.* from messages_fts f join messages m on m.conversation_id = f.conversation_id and m.seq = f.seq
    where messages_fts match ${match} and f.conversation_id in (${scopeConversations(scope)})
      and m.created_at >= ${from} and m.created_at <= ${to}
    order by f.rank, m.created_at desc, m.seq desc limit ${limit}`.execute(ctx.db);
  return result.rows;
}

async function searchPostgres(
  ctx: QueryContext,
  scope: MemoryScope,
  words: string[],
  from: number,
  to: number,
  limit: number,
): Promise<Row[]> {
  const query = sql.join(
    words.map((word) => sql`plainto_tsquery('english', ${word})`),
    sql` || `,
  );
  const result = await sql<Row>`
    select * from (select m.*, ts_rank(to_tsvector('english', m.text), q) as score
      from messages m, (select ${query} as q) as query
      where m.conversation_id in (${scopeConversations(scope)}) and m.role in ('user', 'assistant')
        and to_tsvector('english', m.text) @@ q and m.created_at >= ${from} and m.created_at <= ${to}) as found
    order by score desc, created_at desc, seq desc limit ${limit}`.execute(ctx.db);
  return result.rows;
}
