import type { IdGenerator } from '../core/clock.ts';
import type { Conversation, MessageSource, NewMessage, NewOutboxItem, Participant, Poll } from '../core/domain.ts';
import type { StoreTx } from '../store/store.ts';

export interface OutgoingDraft {
  /** Given when the id must be known before the commit (a streamed reply); generated otherwise. */
  id?: string;
  text: string;
  kind?: 'text' | 'poll';
  poll?: Poll | null;
  /** `assistant` messages are part of what the model reads; `system` ones (debug notes) are not. */
  role?: 'assistant' | 'system';
  source: MessageSource;
}

/**
 * Appends messages to the transcript and queues each for delivery, in the caller's transaction.
 * The message id doubles as the delivery's idempotency key.
 */
export async function appendOutgoing(
  tx: StoreTx,
  target: { conversation: Conversation; participant: Participant | null },
  drafts: OutgoingDraft[],
  context: { ids: IdGenerator; now: Date; turnId: string | null },
): Promise<void> {
  if (drafts.length === 0) return;
  const { conversation, participant } = target;
  const messages: NewMessage[] = drafts.map((draft) => ({
    id: draft.id ?? context.ids.next('msg'),
    conversationId: conversation.id,
    role: draft.role ?? 'assistant',
    kind: draft.kind ?? 'text',
    text: draft.text,
    poll: draft.poll ?? null,
    source: draft.source,
    turnId: context.turnId,
    createdAt: context.now,
  }));
  await tx.appendMessages(messages);
  await tx.enqueueOutbox(
    messages.map((message): NewOutboxItem => ({
      id: context.ids.next('out'),
      conversationId: conversation.id,
      participantId: participant?.id ?? null,
      channel: conversation.channel,
      recipient: participant?.phoneNumber ?? conversation.id,
      kind: message.kind,
      text: message.text,
      poll: message.poll,
      idempotencyKey: message.id,
      nextAttemptAt: context.now,
      createdAt: context.now,
    })),
  );
}
