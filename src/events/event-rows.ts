import type { StoredEvent } from '../core/domain.ts';
import type { Store } from '../store/store.ts';
import { sessionEventSchema, type SessionEvent, type SessionSnapshot } from './session-event.ts';

/** Messages a `resync` snapshot carries. */
const SNAPSHOT_MESSAGES = 20;

/** An event as the log keeps it, read back and checked (the log is written by every process). */
export function eventOfRow(row: StoredEvent): SessionEvent {
  return sessionEventSchema.parse({
    ...row.payload,
    seq: row.seq,
    conversationId: row.conversationId,
    turnId: row.turnNo,
    type: row.type,
    at: row.at.toISOString(),
  });
}

/** A `resync` snapshot: the conversation as it stands, its last messages, and where the stream is. */
export async function sessionSnapshot(
  store: Pick<Store, 'getConversation' | 'listMessages'>,
  conversationId: string,
  {
    speaking,
    lastSeq,
    lastTurnId,
    ...cursor
  }: Pick<SessionSnapshot, 'speaking' | 'lastSeq' | 'lastTurnId' | 'full' | 'nextCursor'>,
): Promise<SessionSnapshot> {
  const [conversation, messages] = await Promise.all([
    store.getConversation(conversationId),
    store.listMessages(conversationId, { limit: SNAPSHOT_MESSAGES }),
  ]);
  return {
    conversationId,
    participantId: conversation?.participantId ?? null,
    flow: conversation?.flow ?? 'unknown',
    state: conversation?.state ?? 'unknown',
    subState: conversation?.subState ?? null,
    speaking,
    lastSeq,
    lastTurnId,
    messages: messages.map((m) => ({
      id: m.id,
      seq: m.seq,
      role: m.role,
      kind: m.kind,
      text: m.text,
      at: m.createdAt.toISOString(),
    })),
    ...cursor,
  };
}
