import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import yazl from 'yazl';
import {
  DELIVERY_STATUSES,
  PARTICIPANT_STATUSES,
  type Message,
  type OutboxItem,
  type ParticipantStatus,
  type ToolCallRecord,
  type TurnRecord,
} from '../../core/domain.ts';
import { goIdQueries } from '../../store/go-ids-queries.ts';
import type { Store } from '../../store/store.ts';
import { adherenceFiles } from './export-adherence-files.ts';
import {
  file,
  idColumns,
  iso,
  ofConversation,
  type Cell,
  type Column,
  type ExportFile,
  type ExportSource,
  type Subject,
} from './export-columns.ts';
import { inPeriod, NO_PERIOD, type ExportPeriod } from './export-period.ts';
import { profileFiles } from './export-profile-files.ts';
import { studyQueries } from './study-queries.ts';

export type { Subject } from './export-columns.ts';

/** Every file of the export, in order; the codebook is written from these definitions. */
export const EXPORT_FILES: readonly ExportFile[] = [
  file<Subject>('participants.csv', async (subject) => [subject], [
    {
      ...idColumns.participant,
      meaning: 'Stable id of the participant; joins every other file',
      value: (s) => s.participant.id,
    },
    {
      name: 'go_id',
      type: 'string',
      meaning: 'Their participant id on the Go PromptPipe (p_...) when imported from it; empty otherwise',
      value: (s) => s.goId,
    },
    {
      name: 'phone_number',
      type: 'string',
      meaning: 'E.164 phone number',
      personal: true,
      value: (s) => s.participant.phoneNumber,
    },
    {
      name: 'name',
      type: 'string',
      meaning: 'Name given at enrolment',
      personal: true,
      value: (s) => s.participant.name,
    },
    {
      name: 'timezone',
      type: 'string',
      meaning: 'IANA time zone of the participant',
      value: (s) => s.participant.timezone,
    },
    {
      name: 'status',
      type: 'enum',
      meaning: 'Participation status at export time',
      values: PARTICIPANT_STATUSES,
      value: (s) => s.participant.status,
    },
    {
      name: 'cohort',
      type: 'string',
      meaning: 'Study group (an arm, a site) given at enrolment or later',
      value: (s) => s.participant.cohort,
    },
    {
      name: 'enrolled_at',
      type: 'datetime',
      meaning: 'Enrolment time (ISO 8601, UTC)',
      value: (s) => iso(s.participant.enrolledAt),
    },
    {
      name: 'conversation_id',
      type: 'string',
      meaning: "The participant's conversation; joins the other files",
      value: (s) => s.conversation?.id ?? null,
    },
    {
      name: 'flow',
      type: 'string',
      meaning: 'The conversation flow (habit-coach, ...)',
      value: (s) => s.conversation?.flow ?? null,
    },
    {
      name: 'sub_state',
      type: 'enum',
      meaning: 'The module the next turn goes to (habit coach), at export time',
      values: ['INTAKE', 'FEEDBACK'],
      value: (s) => s.conversation?.subState ?? null,
    },
  ]),
  file<Message & { participantId: string }>(
    'messages.csv',
    async (subject, { store }) =>
      subject.conversation
        ? (await store.listMessages(subject.conversation.id)).map((m) => ({
            ...m,
            participantId: subject.participant.id,
          }))
        : [],
    [
      { ...idColumns.participant, value: (m) => m.participantId },
      { ...idColumns.conversation, value: (m) => m.conversationId },
      {
        name: 'seq',
        type: 'integer',
        meaning: 'Order of the message in its conversation (1, 2, ...)',
        value: (m) => m.seq,
      },
      { name: 'message_id', type: 'string', meaning: 'Id of the message', value: (m) => m.id },
      {
        name: 'role',
        type: 'enum',
        meaning: 'user (the participant), assistant (sent to them) or system (a note)',
        values: ['user', 'assistant', 'system'],
        value: (m) => m.role,
      },
      { name: 'kind', type: 'enum', meaning: 'Text or a poll', values: ['text', 'poll'], value: (m) => m.kind },
      {
        name: 'source',
        type: 'enum',
        meaning:
          "What produced it: the participant, the model, the coach's timers (daily prompts, reminders, nudges), " +
          'a POST /schedule series, an operator, or the system',
        values: ['participant', 'model', 'timer', 'schedule', 'operator', 'system'],
        value: (m) => m.source,
      },
      {
        name: 'turn_id',
        type: 'string',
        meaning: 'The turn that wrote it (joins turns.csv); empty for timer and operator messages',
        value: (m) => m.turnId,
      },
      {
        name: 'created_at',
        type: 'datetime',
        meaning: 'When it was received or written (ISO 8601, UTC)',
        value: (m) => iso(m.createdAt),
      },
      {
        name: 'text',
        type: 'string',
        meaning: 'The text as sent or received (a poll: its question)',
        personal: true,
        value: (m) => m.text,
      },
      {
        name: 'poll_options',
        type: 'json',
        meaning: "A poll's options, JSON array; empty for text",
        value: (m) => (m.poll ? JSON.stringify(m.poll.options) : null),
      },
    ],
    (m) => m.createdAt,
  ),
  ...adherenceFiles,
  ...profileFiles,
  file<TurnRecord>(
    'turns.csv',
    ofConversation((conversation, { store }) => store.listTurns(conversation.id)),
    [
      { name: 'turn_id', type: 'string', meaning: 'Id of the turn', value: (t) => t.id },
      { ...idColumns.conversation, value: (t) => t.conversationId },
      {
        name: 'trigger',
        type: 'enum',
        meaning: 'What started the turn',
        values: ['message', 'greeting', 'timer'],
        value: (t) => t.trigger,
      },
      {
        name: 'module',
        type: 'string',
        meaning:
          'The flow module that handled it (INTAKE, FEEDBACK, ...), ' +
          'or for a timer its kind (daily-prompt, reminder, ...)',
        value: (t) => t.module,
      },
      {
        name: 'status',
        type: 'enum',
        meaning: 'How the turn ended (cancelled: the participant interrupted it)',
        values: ['completed', 'failed', 'cancelled'],
        value: (t) => t.status,
      },
      { name: 'model_calls', type: 'integer', meaning: 'Model calls of the turn', value: (t) => t.modelCalls },
      { name: 'tool_rounds', type: 'integer', meaning: 'Rounds of tool calls', value: (t) => t.toolRounds },
      { name: 'total_ms', type: 'integer', meaning: 'Duration of the turn in ms', value: (t) => t.totalMs },
      {
        name: 'attempts',
        type: 'integer',
        meaning: 'How many times the turn ran, this one included (more than 1: retried after a failure or an outage)',
        value: (t) => t.attempts,
      },
      { name: 'started_at', type: 'datetime', meaning: 'Start (ISO 8601, UTC)', value: (t) => iso(t.startedAt) },
      { name: 'error', type: 'string', meaning: 'Why a failed turn failed', personal: true, value: (t) => t.error },
    ],
    (t) => t.startedAt,
  ),
  file<ToolCallRecord>(
    'tool_calls.csv',
    ofConversation((conversation, { store }) => store.listToolCalls(conversation.id)),
    [
      { name: 'tool_call_id', type: 'string', meaning: 'Id of the call', value: (c) => c.id },
      { name: 'turn_id', type: 'string', meaning: 'The turn (joins turns.csv)', value: (c) => c.turnId },
      { ...idColumns.conversation, value: (c) => c.conversationId },
      { name: 'round', type: 'integer', meaning: "Round of the turn's tool loop", value: (c) => c.round },
      { name: 'name', type: 'string', meaning: 'Tool name (save_user_profile, scheduler, ...)', value: (c) => c.name },
      {
        name: 'status',
        type: 'enum',
        meaning: 'Whether the call ran',
        values: ['ok', 'error'],
        value: (c) => c.status,
      },
      { name: 'duration_ms', type: 'integer', meaning: 'Duration in ms', value: (c) => c.durationMs },
      { name: 'created_at', type: 'datetime', meaning: 'When it ran (ISO 8601, UTC)', value: (c) => iso(c.createdAt) },
      {
        name: 'arguments',
        type: 'json',
        meaning: 'Arguments as the model sent them',
        personal: true,
        value: (c) => c.arguments,
      },
      {
        name: 'result',
        type: 'string',
        meaning: 'What the tool gave back to the model',
        personal: true,
        value: (c) => c.result,
      },
    ],
    (c) => c.createdAt,
  ),
  file<OutboxItem>(
    'deliveries.csv',
    ofConversation((conversation, { store }) => store.listOutbox(conversation.id)),
    [
      { name: 'delivery_id', type: 'string', meaning: 'Id of the outbound message', value: (d) => d.id },
      { ...idColumns.conversation, value: (d) => d.conversationId },
      { name: 'channel', type: 'string', meaning: 'whatsapp | twilio | webhook | web', value: (d) => d.channel },
      { name: 'kind', type: 'enum', meaning: 'Text or a poll', values: ['text', 'poll'], value: (d) => d.kind },
      {
        name: 'status',
        type: 'enum',
        meaning: 'Where the delivery stands',
        values: ['pending', 'sent', 'failed'],
        value: (d) => d.status,
      },
      { name: 'attempts', type: 'integer', meaning: 'Delivery attempts made', value: (d) => d.attempts },
      { name: 'created_at', type: 'datetime', meaning: 'Queued (ISO 8601, UTC)', value: (d) => iso(d.createdAt) },
      {
        name: 'sent_at',
        type: 'datetime',
        meaning: 'Accepted by the channel (ISO 8601, UTC)',
        value: (d) => iso(d.sentAt),
      },
      {
        name: 'delivery_status',
        type: 'enum',
        meaning: "The provider's furthest receipt; empty until one arrives",
        values: DELIVERY_STATUSES,
        value: (d) => d.deliveryStatus,
      },
      {
        name: 'last_error',
        type: 'string',
        meaning: 'Why the last attempt failed',
        personal: true,
        value: (d) => d.lastError,
      },
    ],
    (d) => d.createdAt,
  ),
];

/**
 * Spreadsheets run a cell that starts with = + - @ (or a tab or CR) as a formula: such cells get a
 * leading apostrophe, except plain signed numbers and phone numbers (`+14165550123`, `-3`), which
 * nothing runs and analysts join on.
 */
export function spreadsheetSafe(value: string): string {
  if (/^[+-][\d\s().-]*\d$/.test(value)) return value;
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

export interface ExportOptions {
  status?: ParticipantStatus;
  cohort?: string;
  /** Leave out phone numbers, names and free text (ids are random, never personal). */
  deidentify: boolean;
  /**
   * Only the rows of this window, in every file whose rows carry a time (participants.csv lists
   * everyone the filters select); the whole study when absent.
   */
  period?: ExportPeriod;
}

/** Each file of the export as a stream of CSV text, in order, the codebook last. */
export function exportFiles(store: Store, options: ExportOptions): Array<{ name: string; csv: Readable }> {
  const source: ExportSource = { store, study: store.extend(studyQueries).ops };
  const kept = (columns: ReadonlyArray<Column<never>>) =>
    columns.filter((column) => !(options.deidentify && column.personal));
  const file = (name: string, source: Readable, columns: ReadonlyArray<{ name: string }>) => {
    const csv = source.pipe(csvWriter(columns));
    // A file that fails half-way (the database went away) fails its CSV stream, never ends it short.
    source.on('error', (error) => csv.destroy(error));
    return { name, csv };
  };
  const codebook = EXPORT_FILES.flatMap((exported) =>
    kept(exported.columns).map((column) => [
      exported.name,
      column.name,
      column.type,
      column.meaning,
      column.values?.join(' | ') ?? null,
    ]),
  );
  return [
    ...EXPORT_FILES.map((exported) =>
      file(
        exported.name,
        Readable.from(fileRows(source, exported, kept(exported.columns), options)),
        kept(exported.columns),
      ),
    ),
    file('codebook.csv', Readable.from(codebook), [
      { name: 'file' },
      { name: 'column' },
      { name: 'type' },
      { name: 'meaning' },
      { name: 'allowed_values' },
    ]),
  ];
}

/**
 * The study as a ZIP of CSV files (RFC 4180, UTF-8, a header row each) and `codebook.csv`,
 * streamed: participants are read a page at a time and each file is written as it is read, so
 * memory does not grow with the study.
 */
export function studyExport(store: Store, options: ExportOptions): Readable {
  const zip = new yazl.ZipFile();
  const output = new PassThrough();
  for (const { name, csv } of exportFiles(store, options)) {
    csv.on('error', (error) => output.destroy(error)); // the download ends with an error, never a short ZIP
    zip.addReadStream(csv, name);
  }
  zip.end();
  return zip.outputStream.pipe(output);
}

/** The same files written into `directory` (created if missing), one after another. */
export async function writeStudyExport(store: Store, options: ExportOptions, directory: string): Promise<string[]> {
  await mkdir(directory, { recursive: true });
  const written: string[] = [];
  for (const { name, csv } of exportFiles(store, options)) {
    await pipeline(csv, createWriteStream(join(directory, name)));
    written.push(name);
  }
  return written;
}

function csvWriter(columns: ReadonlyArray<{ name: string }>) {
  return stringify({
    header: true,
    columns: columns.map((column) => column.name),
    record_delimiter: '\r\n',
    cast: { string: spreadsheetSafe },
  });
}

async function* fileRows(
  source: ExportSource,
  exported: ExportFile,
  columns: ReadonlyArray<Column<never>>,
  options: ExportOptions,
): AsyncGenerator<Cell[]> {
  const period = options.period ?? NO_PERIOD;
  const at = exported.at as ((row: unknown) => Date) | undefined;
  const kept = at && (period.from || period.until) ? (row: unknown) => inPeriod(period, at(row)) : () => true;
  for await (const subject of subjects(source.store, options)) {
    for (const row of await exported.rows(subject, source))
      if (kept(row)) yield columns.map((column) => (column.value as (row: unknown) => Cell)(row));
  }
}

const PAGE = 200;

async function* subjects(store: Store, options: ExportOptions): AsyncGenerator<Subject> {
  const goIds = store.extend(goIdQueries).ops;
  for (let offset = 0; ; offset += PAGE) {
    const page = await store.listParticipants({ status: options.status, cohort: options.cohort, limit: PAGE, offset });
    const imported = await goIds.goIdsOf(page.map((participant) => participant.id));
    for (const participant of page) {
      const conversation = await store.findConversationByParticipant(participant.id);
      yield { participant, conversation, goId: imported.get(participant.id) ?? null };
    }
    if (page.length < PAGE) return;
  }
}
