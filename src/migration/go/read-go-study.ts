import type { GoReceiptRow, GoResponseRow } from './map-go-history.ts';
import { readGoPostgres } from './read-go-postgres.ts';
import { readGoSqlite } from './read-go-sqlite.ts';

/** One Go participant with their flow state, as the Go store holds them. */
export interface GoParticipantRow {
  id: string;
  phone_number: string;
  name: string | null;
  gender: string | null;
  ethnicity: string | null;
  background: string | null;
  status: string;
  /** SQLite: Go's DATETIME text with its offset; PostgreSQL: ISO 8601 (read in the Go server's zone). */
  enrolled_at: string;
  /** JSON text of the `map[string]string`; null or '' when empty. */
  state_data: string | null;
}

/**
 * A Go `daily_prompt_reminder` job, of any status. Go queued one with each daily prompt it sent
 * (`scheduleDailyPromptReminder`), the prompt's time in its payload: the only rows that tell which
 * of Go's sends were daily prompts.
 */
export interface GoJobRow {
  id: string;
  kind: string;
  /** `queued` (still to be sent), `running`, `done` (sent), `canceled` (the participant replied), `failed`. */
  status: string;
  run_at: string;
  /** JSON text; null when Go stored none. */
  payload_json: string | null;
  /** `<kind>:<participant id>` as Go keyed its jobs; null when not keyed. */
  dedupe_key: string | null;
}

export interface GoStudy {
  participants: GoParticipantRow[];
  /** Every `daily_prompt_reminder` job, whatever its status. */
  reminderJobs: GoJobRow[];
  /** In Go's order (`id`). */
  receipts: GoReceiptRow[];
  responses: GoResponseRow[];
}

/** Where a Go PromptPipe database is: a SQLite file, or a PostgreSQL URL (its schema, its server's zone). */
export interface GoSource {
  from: string;
  /** PostgreSQL: the schema the Go tables are in (default `public`). */
  schema?: string;
  /**
   * PostgreSQL: the Go server's own time zone (default UTC, as its Docker image ran). Go wrote
   * local wall-clock times into columns without an offset.
   */
  zone?: string;
}

export function isPostgresUrl(from: string): boolean {
  return /^postgres(ql)?:\/\//.test(from);
}

/** The Go PromptPipe's database, in either of its dialects, opened read-only: the import never writes to it. */
export async function readGoStudy(source: GoSource): Promise<GoStudy> {
  return isPostgresUrl(source.from) ? readGoPostgres(source) : readGoSqlite(source.from);
}
