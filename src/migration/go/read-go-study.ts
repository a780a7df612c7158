import { DatabaseSync } from 'node:sqlite';

/** One Go participant with their flow state, as the Go SQLite store holds them. */
export interface GoParticipantRow {
  id: string;
  phone_number: string;
  name: string | null;
  gender: string | null;
  ethnicity: string | null;
  background: string | null;
  status: string;
  enrolled_at: string;
  state_data: string | null;
}

/** A queued Go job (a pending reminder, an auto-feedback or state transition). */
export interface GoJobRow {
  kind: string;
  run_at: string;
  payload_json: string;
}

/**
 * The Go PromptPipe's SQLite database, opened read-only: the import never writes to it.
 * (PostgreSQL sources are not read yet.)
 */
export function readGoStudy(path: string): { participants: GoParticipantRow[]; queuedJobs: GoJobRow[] } {
  const database = new DatabaseSync(path, { readOnly: true });
  try {
    const participants = database
      .prepare(
        `select p.id, p.phone_number, p.name, p.gender, p.ethnicity, p.background, p.status, p.enrolled_at, f.state_data
         from conversation_participants p
         left join flow_states f on f.participant_id = p.id and f.flow_type = 'conversation'
         order by p.enrolled_at`,
      )
      .all() as unknown as GoParticipantRow[];
    const queuedJobs = database
      .prepare(`select kind, run_at, payload_json from jobs where status = 'queued'`)
      .all() as unknown as GoJobRow[];
    return { participants, queuedJobs };
  } finally {
    database.close();
  }
}
