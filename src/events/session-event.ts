import { z } from 'zod';

/**
 * The session stream's wire protocol (spec 004 "Event protocol"), defined once. Every event a
 * client receives, over WebSocket or SSE, parses with `sessionEventSchema`.
 */
export const EVENT_TYPES = [
  'token',
  'status',
  'final',
  'error',
  'resync',
  'speaking',
  'pong',
  'ack',
  'approval_requested',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
export const EVENT_ROLES = ['assistant', 'system'] as const;

const common = {
  /** Gapless per conversation; a `resync` carries the log's latest seq instead of its own. */
  seq: z.number().int().nonnegative(),
  conversationId: z.string(),
  /** Monotonic per conversation turn; null for events outside a turn (a timer's prompt). */
  turnId: z.number().int().positive().nullable(),
  /** The assistant message being streamed or finalised. */
  messageId: z.string().nullable(),
  role: z.enum(EVENT_ROLES),
  /** Ties tool progress events to the tool call they report on. */
  correlationId: z.string().nullable(),
  at: z.iso.datetime(),
};

const snapshot = z.object({
  conversationId: z.string(),
  participantId: z.string().nullable(),
  /** The conversation's flow (`habit-coach`, `service-desk`, `assistant`). */
  flow: z.string(),
  state: z.string(),
  subState: z.string().nullable(),
  speaking: z.boolean(),
  lastSeq: z.number().int().nonnegative(),
  lastTurnId: z.number().int().nonnegative(),
  /** The last messages of the transcript, oldest first. */
  messages: z.array(
    z.object({ id: z.string(), seq: z.number(), role: z.string(), kind: z.string(), text: z.string(), at: z.string() }),
  ),
  /** True when the snapshot replaces events the client can no longer get (stale or unknown cursor). */
  full: z.boolean(),
  /** Set when the replay stopped at its cap: ask again from here for the rest. */
  nextCursor: z.number().int().nullable(),
  /**
   * What a UI needs to rebuild the conversation's screen, from its flow (the service desk: what
   * waits for a yes, the options shown, verification); never secrets or internal ids. Null for a
   * flow without one; read as the snapshot is sent.
   */
  view: z.record(z.string(), z.unknown()).nullable().optional(),
});
export type SessionSnapshot = z.output<typeof snapshot>;

export const sessionEventSchema = z.discriminatedUnion('type', [
  z.object({ ...common, type: z.literal('token'), text: z.string().min(1) }),
  z.object({
    ...common,
    type: z.literal('status'),
    text: z.string().min(1),
    data: z.record(z.string(), z.unknown()).optional(),
  }),
  z.object({
    ...common,
    type: z.literal('final'),
    text: z.string(),
    data: z.object({
      kind: z.string(),
      source: z.string(),
      messageSeq: z.number().int(),
      poll: z.object({ question: z.string(), options: z.array(z.string()) }).nullable(),
    }),
  }),
  z.object({
    ...common,
    type: z.literal('error'),
    text: z.string(),
    data: z.object({ code: z.string(), field: z.string().optional() }),
  }),
  z.object({ ...common, type: z.literal('resync'), data: snapshot }),
  /** A tool call waits for a yes (decision 022): answer with POST …/approvals/:callId, or the person says yes/no. */
  z.object({
    ...common,
    type: z.literal('approval_requested'),
    text: z.string().min(1),
    data: z.object({ callId: z.string(), tool: z.string(), arguments: z.unknown(), summary: z.string() }),
  }),
  z.object({ ...common, type: z.literal('speaking'), data: z.object({ speaking: z.boolean() }) }),
  /** The answer to a client's `ping` frame, to that client only (like `error` and `resync`: seq 0, not logged). */
  z.object({ ...common, type: z.literal('pong') }),
  /** The answer to a client's input frame (a message, a transcript, a barge-in), to that client only. */
  z.object({
    ...common,
    type: z.literal('ack'),
    data: z.object({
      ref: z.string().nullable(),
      inboxId: z.string().optional(),
      duplicate: z.boolean().optional(),
      interrupted: z.boolean().optional(),
    }),
  }),
]);
export type SessionEvent = z.output<typeof sessionEventSchema>;

/** What a producer supplies; the hub adds seq, conversationId and time. */
export type EventDraft = DistributiveOmit<
  SessionEvent,
  'seq' | 'conversationId' | 'at' | 'turnId' | 'messageId' | 'role' | 'correlationId'
> & {
  turnId?: number | null;
  messageId?: string | null;
  role?: (typeof EVENT_ROLES)[number];
  correlationId?: string | null;
};
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
