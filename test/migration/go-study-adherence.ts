import { DatabaseSync } from 'node:sqlite';
import { parse } from 'csv-parse/sync';
import { expect } from 'vitest';
import { goIdQueries } from '../../src/store/go-ids-queries.ts';
import type { TestServer } from '../kit/test-server.ts';
import { unzipText } from '../kit/unzip.ts';
import { GO_SQLITE_FIXTURE, IMPORT_OPTIONS } from './go-postgres-fixture.ts';

/** One daily prompt as the Go database itself tells it, read with SQL alone (no code of ours). */
export interface GoPrompt {
  goId: string;
  /** The UTC day it was sent. */
  day: string;
  replied: boolean;
  done: boolean;
  /** Unanswered and under 24 h old at the import's "now": not yet replied or missed. */
  open: boolean;
}

/**
 * Go's daily prompts: one `daily_prompt_reminder` job per prompt sent, at `expected_sent_at`. A
 * prompt is replied when a response came from the participant's number within 24 h of it and
 * before their next prompt; done when the first "Did you do it?" vote in that window
 * (`responses.body`, as Go recorded it) was Done. Go's votes are whole-second Unix times.
 */
export function goPrompts(): GoPrompt[] {
  const go = new DatabaseSync(GO_SQLITE_FIXTURE, { readOnly: true });
  try {
    const rows = go
      .prepare(
        `with prompts as (
           select json_extract(payload_json, '$.participant_id') as go_id,
                  cast(strftime('%s', json_extract(payload_json, '$.expected_sent_at')) as integer) as sent
           from jobs where kind = 'daily_prompt_reminder'
         ),
         windows as (
           select p.go_id, p.sent, '+' || c.phone_number as sender,
                  min(p.sent + 86400,
                      coalesce(lead(p.sent) over (partition by p.go_id order by p.sent), p.sent + 86400)) as until
           from prompts p join conversation_participants c on c.id = p.go_id
         )
         select w.go_id, date(w.sent, 'unixepoch') as day, w.sent,
                exists (select 1 from responses r
                         where r.sender = w.sender and r.time >= w.sent and r.time < w.until) as replied,
                coalesce((select r.body from responses r
                           where r.sender = w.sender and r.time >= w.sent and r.time < w.until
                             and r.body in ('Q: Did you do it? A: Done', 'Q: Did you do it? A: Next time')
                           order by r.time, r.id limit 1) = 'Q: Did you do it? A: Done', 0) as done
         from windows w order by w.go_id, w.sent`,
      )
      .all();
    const now = IMPORT_OPTIONS.now.getTime() / 1000;
    return rows.map((row) => ({
      goId: String(row.go_id),
      day: String(row.day),
      replied: row.replied === 1,
      done: row.done === 1,
      open: row.replied === 0 && now - Number(row.sent) < 86_400,
    }));
  } finally {
    go.close();
  }
}

/** Each Go participant's own count of the prompts it sent them (`userProfile.total_prompts`). */
export function goTotalPrompts(): Map<string, number> {
  const go = new DatabaseSync(GO_SQLITE_FIXTURE, { readOnly: true });
  try {
    const rows = go
      .prepare(
        `select p.id, coalesce(json_extract(json_extract(f.state_data, '$.userProfile'), '$.total_prompts'), 0) as total
         from conversation_participants p join flow_states f on f.participant_id = p.id order by p.enrolled_at`,
      )
      .all();
    return new Map(rows.map((row) => [String(row.id), Number(row.total)]));
  } finally {
    go.close();
  }
}

const count = (prompts: readonly GoPrompt[], which: (prompt: GoPrompt) => boolean) => prompts.filter(which).length;

/**
 * The study overview (per participant, and per day: `STUDY_TIMEZONE` is UTC here) and the export's
 * `prompts.csv` of a server holding the imported fixture say what the Go data says.
 */
export async function expectAdherenceAsGo(server: TestServer): Promise<void> {
  const prompts = goPrompts();
  expect(prompts).toHaveLength(69);
  const { body } = await server.request('GET', '/study/overview');
  const { participants, series, totals } = body.result;
  const goIds = await server.store.extend(goIdQueries).ops.goIdsOf(participants.map((p: { id: string }) => p.id));
  expect(goIds.size).toBe(6);
  const totalPrompts = goTotalPrompts();
  for (const participant of participants) {
    const goId = goIds.get(participant.id)!;
    const theirs = prompts.filter((prompt) => prompt.goId === goId);
    const settled = theirs.filter((prompt) => !prompt.open);
    const replied = count(settled, (prompt) => prompt.replied);
    expect(theirs.length, goId).toBe(totalPrompts.get(goId)); // Go's own counter agrees with its jobs
    expect(participant, goId).toMatchObject({
      prompts_sent: theirs.length,
      done_count: count(theirs, (prompt) => prompt.done),
    });
    if (settled.length === 0) expect(participant.response_rate, goId).toBeNull();
    else expect(participant.response_rate, goId).toBeCloseTo(replied / settled.length, 3);
  }
  expect(totals.prompts_sent).toBe(69);

  const days = [...new Set(prompts.map((prompt) => prompt.day))].sort();
  const onDay = (day: string) => prompts.filter((prompt) => prompt.day === day);
  const columns = ['date', 'prompts_sent', 'prompts_replied', 'done', 'prompts_open'];
  expect(
    series
      .filter((day: { prompts_sent: number }) => day.prompts_sent > 0)
      .map((day: Record<string, unknown>) => columns.map((column) => day[column])),
  ).toEqual(
    days.map((day) => [
      day,
      onDay(day).length,
      count(onDay(day), (prompt) => prompt.replied),
      count(onDay(day), (prompt) => prompt.done),
      count(onDay(day), (prompt) => prompt.open),
    ]),
  );

  const files = await unzipText(Buffer.from(await (await server.fetch('/study/export')).arrayBuffer()));
  const rows = (name: string) => parse(files.get(name)!, { columns: true, bom: true }) as Array<Record<string, string>>;
  const goIdOf = new Map(rows('participants.csv').map((row) => [row.participant_id!, row.go_id!]));
  const exported = rows('prompts.csv').map((row) => ({
    goId: goIdOf.get(row.participant_id!)!,
    day: row.sent_at!.slice(0, 10),
    replied: row.replied === '1',
    done: row.done === '1',
  }));
  const sorted = (list: Array<Omit<GoPrompt, 'open'>>) =>
    list.map(({ goId, day, replied, done }) => `${goId} ${day} ${replied} ${done}`).sort();
  expect(sorted(exported)).toEqual(sorted(prompts));
}
