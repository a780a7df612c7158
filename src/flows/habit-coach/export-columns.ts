import { DateTime } from 'luxon';
import type { Conversation, Participant } from '../../core/domain.ts';
import type { Store } from '../../store/store.ts';
import type { StudyQueries } from './study-queries.ts';

/** What the study export's files are made of: columns the codebook describes, rows per participant. */

export type Cell = string | number | null;

/** One column of an exported file, as the codebook describes it. */
export interface Column<Row> {
  name: string;
  type: 'string' | 'integer' | 'datetime' | 'enum' | 'json';
  meaning: string;
  /** The values an enum column takes, for the codebook's `allowed_values`. */
  values?: readonly string[];
  /** Contact data or free text: left out of a de-identified export. */
  personal?: boolean;
  value: (row: Row) => Cell;
}

/** A participant and their conversation: what every file's rows hang off. */
export interface Subject {
  participant: Participant;
  conversation: Conversation | undefined;
  /** Their id on the Go PromptPipe when they were imported from it (`npm run import:go`). */
  goId: string | null;
}

/** Where rows are read from: the engine's store and the habit coach's study queries. */
export interface ExportSource {
  store: Store;
  study: Pick<StudyQueries, 'promptTimers'>;
}

export interface ExportFile {
  name: string;
  columns: ReadonlyArray<Column<never>>;
  rows: (subject: Subject, source: ExportSource) => Promise<readonly unknown[]>;
  /** When a row happened, for the export's `from`/`to`; a file without it (participants) is not filtered by time. */
  at?: (row: never) => Date;
}

/**
 * A file of rows of one type; its columns read those rows, `at` tells when one happened (the
 * export's `from` and `to` keep the rows whose `at` falls between them).
 */
export function file<Row>(
  name: string,
  rows: (subject: Subject, source: ExportSource) => Promise<readonly Row[]>,
  columns: ReadonlyArray<Column<Row>>,
  at?: (row: Row) => Date,
): ExportFile {
  return {
    name,
    rows,
    columns: columns as ReadonlyArray<Column<never>>,
    ...(at ? { at: at as (row: never) => Date } : {}),
  };
}

export const iso = (date: Date | null | undefined): string | null => date?.toISOString() ?? null;

/** ISO 8601 in `zone`, with its offset (`2026-06-02T07:50:00.000-04:00`); UTC when no zone is known. */
export const localIso = (date: Date | null | undefined, zone: string | null): string | null =>
  date ? DateTime.fromJSDate(date, { zone: zone ?? 'UTC' }).toISO() : null;

export const ofConversation =
  <Row>(read: (conversation: Conversation, source: ExportSource, subject: Subject) => Promise<readonly Row[]>) =>
  async (subject: Subject, source: ExportSource) =>
    subject.conversation ? read(subject.conversation, source, subject) : [];

export const idColumns = {
  participant: { name: 'participant_id', type: 'string', meaning: 'The participant (joins participants.csv)' },
  conversation: { name: 'conversation_id', type: 'string', meaning: 'The conversation (joins participants.csv)' },
} as const;

/** A row with the participant it belongs to, for files whose records do not carry it. */
export type OfParticipant<Row> = Row & { participantId: string };
