import type { QueryContext } from './query-context.ts';
import { prepared } from './prepared.ts';

const lockRow = prepared((db, a: { conversationId: string }) =>
  db.selectFrom('conversations').select('id').where('id', '=', a.conversationId).forNoKeyUpdate(),
);

/**
 * PostgreSQL: another transaction writing this conversation's transcript or event log waits here
 * until this one ends, and the statements after it see what that one committed (their snapshots
 * are taken after the wait). NO KEY UPDATE leaves inserts that reference the conversation (timers,
 * outbox) unblocked. Once a transaction: it remembers the rows it locked (`QueryContext.locked`).
 */
export async function lockConversation(ctx: QueryContext, conversationId: string): Promise<void> {
  if (ctx.locked?.has(conversationId)) return;
  await lockRow.write(ctx, { conversationId }); // its answer is the wait; the rows say nothing
  ctx.locked?.add(conversationId);
}
