import { DatabaseSync } from 'node:sqlite';
import type { GoReceiptRow, GoResponseRow } from './map-go-history.ts';
import type { GoJobRow, GoParticipantRow, GoStudy } from './read-go-study.ts';

/** The Go server's SQLite database (`state.db`), opened read-only. */
export function readGoSqlite(path: string): GoStudy {
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
    const reminderJobs = database
      .prepare(
        `select id, kind, status, run_at, payload_json, dedupe_key from jobs
         where kind = 'daily_prompt_reminder' order by id`,
      )
      .all() as unknown as GoJobRow[];
    const receipts = database.prepare(`select id, recipient, status, time from receipts order by id`).all();
    const responses = database.prepare(`select id, sender, body, time from responses order by id`).all();
    return {
      participants,
      reminderJobs,
      receipts: receipts as unknown as GoReceiptRow[],
      responses: responses as unknown as GoResponseRow[],
    };
  } finally {
    database.close();
  }
}
