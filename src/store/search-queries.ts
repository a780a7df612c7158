import { sql, type Selectable } from 'kysely';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { MessagesTable } from './schema.ts';
import { fromMs, toMs } from './codec.ts';
import { toMessage } from './messages-queries.ts';

type SearchOperations = Pick<StoreOperations, 'searchMessages' | 'listNotes' | 'addNote' | 'deleteNote'>;

/** Words of the keywords, for an any-word match; punctuation is dropped so it never reaches a query language. */
export function searchWords(keywords: string[]): string[] {
  // Marks belong to their letters: "नमस्ते" is one word, not "नमस" and "त".
  const words = keywords.flatMap((keyword) => keyword.toLowerCase().match(/[\p{L}\p{M}\p{N}]+/gu) ?? []);
  return [...new Set(words)].slice(0, 32);
}

export function searchQueries(ctx: QueryContext): SearchOperations {
  const { db } = ctx;
  return {
    async searchMessages(conversationId, search) {
      const words = searchWords(search.keywords);
      if (words.length === 0 || search.limit <= 0) return [];
      const from = search.from ? toMs(search.from) : Number.MIN_SAFE_INTEGER;
      const to = search.to ? toMs(search.to) : Number.MAX_SAFE_INTEGER;
      const rows =
        ctx.dialect === 'postgres'
          ? await searchPostgres(ctx, conversationId, words, from, to, search.limit)
          : await searchSqlite(ctx, conversationId, words, from, to, search.limit);
      return rows.map(toMessage);
    },

    async listNotes(conversationId) {
      const rows = await db
        .selectFrom('assistant_notes')
        .selectAll()
        .where('conversation_id', '=', conversationId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map((row) => ({
        id: row.id,
        conversationId: row.conversation_id,
        text: row.text,
        createdAt: fromMs(row.created_at),
      }));
    },

    async addNote(note) {
      await db
        .insertInto('assistant_notes')
        .values({
          id: note.id,
          conversation_id: note.conversationId,
          text: note.text,
          created_at: toMs(note.createdAt),
        })
        .execute();
    },

    async deleteNote(conversationId, noteId) {
      const result = await db
        .deleteFrom('assistant_notes')
        .where('conversation_id', '=', conversationId)
        .where('id', '=', noteId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

type Row = Selectable<MessagesTable>;

async function searchSqlite(
  ctx: QueryContext,
  conversationId: string,
  words: string[],
  from: number,
  to: number,
  limit: number,
): Promise<Row[]> {
  const match = words.map((word) => `"${word}"`).join(' OR ');
  const result = await sql<Row>`
    select m.* from messages_fts f join messages m on m.conversation_id = f.conversation_id and m.seq = f.seq
    where messages_fts match ${match} and f.conversation_id = ${conversationId} and m.created_at >= ${from} and m.created_at <= ${to}
    order by f.rank, m.seq desc limit ${limit}`.execute(ctx.db);
  return result.rows;
}

async function searchPostgres(
  ctx: QueryContext,
  conversationId: string,
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
      where m.conversation_id = ${conversationId} and m.role in ('user', 'assistant')
        and (select transcript_search from conversations where id = ${conversationId})
        and to_tsvector('english', m.text) @@ q and m.created_at >= ${from} and m.created_at <= ${to}) as found
    order by score desc, seq desc limit ${limit}`.execute(ctx.db);
  return result.rows;
}
