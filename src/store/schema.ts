import type { ColumnType, Generated } from 'kysely';

/**
 * The tables as Kysely sees them. Timestamps are epoch milliseconds (`bigint` columns, parsed to
 * numbers on both dialects), booleans are 0/1, structured values are JSON text. Rows are mapped
 * to domain records in the `*-queries.ts` files; nothing outside `src/store` sees these types.
 */
export interface Database {
  participants: ParticipantsTable;
  conversations: ConversationsTable;
  messages: MessagesTable;
  profiles: ProfilesTable;
  schedules: SchedulesTable;
  timers: TimersTable;
  inbox: InboxTable;
  outbox: OutboxTable;
  turns: TurnsTable;
  tool_calls: ToolCallsTable;
  event_pages: EventPagesTable;
  channel_contacts: ChannelContactsTable;
  delivery_receipts: DeliveryReceiptsTable;
  conversation_leases: ConversationLeasesTable;
  event_followers: EventFollowersTable;
  crm_customers: { id: string; name: string; phone: string; zip: string; address: string };
  crm_slots: { id: string; date: string; window_start: string; window_end: string; available: number };
  crm_appointments: {
    id: string;
    customer_id: string;
    service: string;
    date: string;
    window_start: string;
    window_end: string;
    status: string;
    address: string;
    notes: string | null;
    slot_id: string | null;
  };
  crm_invoices: {
    id: string;
    customer_id: string;
    amount_cents: number;
    currency: string;
    due_date: string;
    status: string;
  };
  /** `conversation_id` and `phone` (migration 026): where the ticket was opened, the number to call back. */
  crm_tickets: {
    id: string;
    customer_id: string | null;
    reason: string;
    created_at: number;
    conversation_id: string | null;
    phone: string | null;
  };
  flow_states: { conversation_id: string; data: string; updated_at: number };
  /** `person`: whose note it is (migration 016); null for a session nobody is known for. */
  assistant_notes: { id: string; conversation_id: string; person: string | null; text: string; created_at: number };
  /** A message's embedding by one model (migration 016): base64 of little-endian float32. */
  message_embeddings: { conversation_id: string; seq: number; model: string; vector: string; created_at: number };
  /** Who a web session is for (migration 014): the caller's phone, the person whose memory it shares. */
  session_callers: { conversation_id: string; phone: string | null; person: string | null; updated_at: number };
  /** One row (`id` = 'server') once a virtual clock has run. */
  virtual_clock: { id: string; at: number };
  /** Always empty: /health's write probe on SQLite. */
  write_probes: { id: string; filler: string };
}

/** Insertion order: an identity column (PostgreSQL) or the autoincrement rowid (SQLite). */
type Ordinal = Generated<number>;

export interface ParticipantsTable {
  id: string;
  ordinal: Ordinal;
  phone_number: string;
  name: string | null;
  gender: string | null;
  ethnicity: string | null;
  background: string | null;
  timezone: string | null;
  status: string;
  cohort: string | null;
  debug: number;
  enrolled_at: number;
  created_at: number;
  updated_at: number;
}

export interface ConversationsTable {
  id: string;
  participant_id: string | null;
  channel: string;
  flow: string;
  state: string;
  sub_state: string | null;
  version: number;
  created_at: number;
  updated_at: number;
  /** Its messages feed the full-text index (SQLite; migration 012): 1/0 or a boolean, by dialect. */
  transcript_search: ColumnType<number | boolean, boolean | undefined, boolean>;
}

export interface MessagesTable {
  conversation_id: string;
  seq: number;
  id: string;
  role: string;
  kind: string;
  text: string;
  /** JSON of a `Poll`, or null. */
  poll: string | null;
  source: string;
  turn_id: string | null;
  created_at: number;
}

export interface ProfilesTable {
  participant_id: string;
  /** JSON: text field name → value. */
  fields: string;
  intensity: string;
  success_count: number;
  total_prompts: number;
  /** JSON: `{ scores, active, lastUpdatedAt }` with the date as epoch ms. */
  tone: string;
  /** JSON: field name → epoch ms. */
  field_updated_at: string;
  last_habit_prompt: string | null;
  last_prompt_sent_at: number | null;
  updated_at: number;
}

export interface SchedulesTable {
  id: string;
  ordinal: Ordinal;
  participant_id: string;
  kind: string;
  fixed_time: string | null;
  window_start: string | null;
  window_end: string | null;
  timezone: string;
  prep_minutes: number;
  created_at: number;
}

export interface TimersTable {
  id: string;
  ordinal: Ordinal;
  kind: string;
  conversation_id: string;
  participant_id: string | null;
  dedup_key: string;
  due_at: number;
  /** JSON of the kind-specific payload. */
  payload: string;
  status: string;
  attempts: number;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface InboxTable {
  id: string;
  ordinal: Ordinal;
  channel: string;
  channel_message_id: string | null;
  sender: string;
  text: string;
  participant_id: string | null;
  conversation_id: string | null;
  status: string;
  error: string | null;
  received_at: number;
  processed_at: number | null;
  trace_parent: string | null;
}

export interface OutboxTable {
  id: string;
  ordinal: Ordinal;
  conversation_id: string;
  participant_id: string | null;
  channel: string;
  recipient: string;
  kind: string;
  text: string;
  poll: string | null;
  idempotency_key: string;
  status: string;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
  provider_message_id: string | null;
  delivery_status: string | null;
  delivery_status_at: number | null;
  delivery_error: string | null;
}

export interface ChannelContactsTable {
  channel: string;
  contact_id: string;
  participant_id: string | null;
  phone_number: string | null;
  last_inbound_at: number | null;
  opted_out_at: number | null;
  updated_at: number;
}

export interface DeliveryReceiptsTable {
  channel: string;
  provider_message_id: string;
  status: string;
  at: number;
  error: string | null;
}

export interface TurnsTable {
  id: string;
  ordinal: Ordinal;
  conversation_id: string;
  inbox_id: string | null;
  trigger: string;
  module: string;
  status: string;
  model_calls: number;
  tool_rounds: number;
  model_ms: number;
  tool_ms: number;
  total_ms: number;
  first_token_ms: number | null;
  time_to_status_ms: number | null;
  error: string | null;
  started_at: number;
  finished_at: number;
  trace_id: string | null;
  attempts: number;
  /** The turn's tool calls, a JSON array of `StoredCall` (migration 024), or null for none. */
  tool_calls: string | null;
}

export interface ToolCallsTable {
  id: string;
  ordinal: Ordinal;
  turn_id: string;
  conversation_id: string;
  round: number;
  name: string;
  arguments: string;
  result: string;
  status: string;
  duration_ms: number;
  created_at: number;
}

/** Consecutive session events of a conversation, seqs `first_seq`..`last_seq` (migration 022). */
export interface EventPagesTable {
  conversation_id: string;
  first_seq: number;
  last_seq: number;
  /** The turn of the page's last event that has one. */
  turn_no: number | null;
  /** The transcript seq the page's last `final` announced. */
  last_message_seq: number | null;
  /** JSON array of `{ type, turn, at (ms), payload }`, in seq order. */
  events: string;
}

/** A process following a conversation's session events, until a time in ms (migration 020). */
export interface EventFollowersTable {
  conversation_id: string;
  owner: string;
  until: number;
}

export interface ConversationLeasesTable {
  conversation_id: string;
  owner: string;
  lease_until: number;
}
