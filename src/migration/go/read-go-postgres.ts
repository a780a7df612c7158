import pg from 'pg';
import type { GoReceiptRow, GoResponseRow } from './map-go-history.ts';
import type { GoJobRow, GoParticipantRow, GoSource, GoStudy } from './read-go-study.ts';

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * The Go server's PostgreSQL database, in one read-only transaction (nothing can be written
 * through it). Its `TIMESTAMP` columns hold the Go process's wall-clock time without an offset:
 * they are read in `source.zone`. JSONB comes back as text, so both dialects are decoded alike.
 */
export async function readGoPostgres(source: GoSource): Promise<GoStudy> {
  const schema = source.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name ${JSON.stringify(schema)}`);
  const zone = source.zone ?? 'UTC';
  const client = new pg.Client({ connectionString: source.from, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query('begin transaction read only');
    await client.query(`set local search_path to "${schema}"`);
    const iso = (column: string) =>
      `to_char((${column} at time zone $1) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
    const participants = await client.query<GoParticipantRow>(
      `select p.id, p.phone_number, p.name, p.gender, p.ethnicity, p.background, p.status,
              ${iso('p.enrolled_at')} as enrolled_at, f.state_data::text as state_data
       from conversation_participants p
       left join flow_states f on f.participant_id = p.id and f.flow_type = 'conversation'
       order by p.enrolled_at`,
      [zone],
    );
    const jobs = await client.query<GoJobRow>(
      `select id, kind, status, ${iso('run_at')} as run_at, payload_json::text as payload_json, dedupe_key
       from jobs where kind = 'daily_prompt_reminder' order by id`,
      [zone],
    );
    // BIGINT comes back as text: the times as numbers, as SQLite gives them.
    const receipts = await client.query<GoReceiptRow>(
      'select id, recipient, status, time::float8 as time from receipts order by id',
    );
    const responses = await client.query<GoResponseRow>(
      'select id, sender, body, time::float8 as time from responses order by id',
    );
    return {
      participants: participants.rows,
      reminderJobs: jobs.rows,
      receipts: receipts.rows,
      responses: responses.rows,
    };
  } finally {
    await client.query('rollback').catch(() => undefined);
    await client.end();
  }
}
