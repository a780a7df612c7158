import { randomUUID } from 'node:crypto';
import type {
  Conversation,
  InboxItem,
  NewMessage,
  NewOutboxItem,
  Participant,
  ToolCallRecord,
  TurnRecord,
} from '../../src/core/domain.ts';
import type { Schedule } from '../../src/core/schedule.ts';
import type { NewTimer } from '../../src/core/timer.ts';
import type { Store } from '../../src/store/store.ts';

/** Record factories for the store contract suite: unique ids, millisecond-precise dates. */

export const T0 = new Date('2025-03-01T12:00:00.123Z');

/** `T0` moved by `ms`. */
export function at(ms: number): Date {
  return new Date(T0.getTime() + ms);
}

let counter = 0;
/** A unique id that does not sort in creation order (random prefix). */
export function uid(prefix: string): string {
  counter += 1;
  return `${prefix}_${randomUUID().slice(0, 8)}_${counter}`;
}

let phones = 0;
export function phone(): string {
  phones += 1;
  return `+1416${String(Math.floor(Math.random() * 1000)).padStart(3, '0')}${String(phones).padStart(4, '0')}`;
}

export function participant(overrides: Partial<Participant> = {}): Participant {
  return {
    id: uid('p'),
    phoneNumber: phone(),
    name: 'Ada',
    gender: 'female',
    ethnicity: null,
    background: 'engineer',
    timezone: 'America/Toronto',
    status: 'active',
    cohort: null,
    debug: false,
    enrolledAt: T0,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

export function conversation(participantId: string | null, overrides: Partial<Conversation> = {}): Conversation {
  return {
    id: uid('c'),
    participantId,
    channel: 'webhook',
    flow: 'habit-coach',
    state: 'CONVERSATION_ACTIVE',
    subState: null,
    version: 1,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

export function message(conversationId: string, overrides: Partial<NewMessage> = {}): NewMessage {
  return {
    id: uid('m'),
    conversationId,
    role: 'user',
    kind: 'text',
    text: 'hello',
    poll: null,
    source: 'participant',
    turnId: null,
    createdAt: T0,
    ...overrides,
  };
}

export function inboxItem(overrides: Partial<InboxItem> = {}): InboxItem {
  return {
    id: uid('in'),
    channel: 'webhook',
    channelMessageId: uid('wamid'),
    sender: '+14165550100',
    text: 'hi',
    participantId: null,
    conversationId: null,
    status: 'pending',
    error: null,
    receivedAt: T0,
    processedAt: null,
    ...overrides,
  };
}

export function outboxItem(conversationId: string, overrides: Partial<NewOutboxItem> = {}): NewOutboxItem {
  return {
    id: uid('out'),
    conversationId,
    participantId: null,
    channel: 'webhook',
    recipient: '+14165550100',
    kind: 'text',
    text: 'reply',
    poll: null,
    idempotencyKey: uid('idem'),
    nextAttemptAt: T0,
    createdAt: T0,
    ...overrides,
  };
}

export function schedule(participantId: string, overrides: Partial<Schedule> = {}): Schedule {
  return {
    id: uid('s'),
    participantId,
    kind: 'fixed',
    fixedTime: '08:30',
    windowStart: null,
    windowEnd: null,
    timezone: 'America/Toronto',
    prepMinutes: 10,
    createdAt: T0,
    ...overrides,
  };
}

export function timer(
  conversationId: string,
  participantId: string | null,
  overrides: Partial<NewTimer> = {},
): NewTimer {
  return {
    id: uid('tmr'),
    kind: 'reminder',
    conversationId,
    participantId,
    dedupKey: uid('key'),
    dueAt: at(60_000),
    payload: { promptSentAt: T0.toISOString(), nested: [1, 'two', null] },
    createdAt: T0,
    ...overrides,
  };
}

export function turn(conversationId: string, overrides: Partial<TurnRecord> = {}): TurnRecord {
  return {
    id: uid('turn'),
    conversationId,
    inboxId: null,
    trigger: 'message',
    module: 'INTAKE',
    status: 'completed',
    modelCalls: 2,
    toolRounds: 1,
    modelMs: 120,
    toolMs: 15,
    totalMs: 140,
    firstTokenMs: null,
    timeToStatusMs: null,
    error: null,
    startedAt: T0,
    finishedAt: at(140),
    traceId: null,
    attempts: 1,
    ...overrides,
  };
}

export function toolCall(
  conversationId: string,
  turnId: string,
  overrides: Partial<ToolCallRecord> = {},
): ToolCallRecord {
  return {
    id: uid('call'),
    turnId,
    conversationId,
    round: 1,
    name: 'save_user_profile',
    arguments: '{"habit_domain":"walking"}',
    result: 'saved',
    status: 'ok',
    durationMs: 3,
    createdAt: T0,
    ...overrides,
  };
}

/** A stored participant with their conversation, the starting point of most contract tests. */
export async function participantWithConversation(store: Pick<Store, 'insertParticipant' | 'insertConversation'>) {
  const p = participant();
  const c = conversation(p.id);
  await store.insertParticipant(p);
  await store.insertConversation(c);
  return { p, c };
}
