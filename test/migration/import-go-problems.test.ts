import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { importGoStudy, type ImportReport } from '../../src/migration/go/import-go-study.ts';
import { goIdQueries } from '../../src/store/go-ids-queries.ts';
import { openStore } from '../../src/store/open-store.ts';
import { tempSqliteUrl } from '../kit/test-server.ts';
import { GO_SQLITE_FIXTURE, IMPORT_OPTIONS } from './go-postgres-fixture.ts';

const run = promisify(execFile);
const options = IMPORT_OPTIONS;
// The fixture's participants (its README §4), in its order.
const MAYA = 'p_6ddb126738635da7b462fec7b5d13883';
const DANIEL = 'p_532a3eabdce57b73c7d2a28f6277ac48';
const PRIYA = 'p_6ea029feca8c22ece9ff829b5aa01f6c';
const ALL = [
  MAYA,
  'p_e42018b77a9c2d8bd0855410951a08a4',
  DANIEL,
  PRIYA,
  'p_7df88ee4d9359cc2349c88c778a0241b',
  'p_f89de48b36576c832f1956b8ce727202',
];
const DANIEL_REMINDER = 'job_0cb091da331ee479524508278fb3d4fc';

/** A copy of the Go fixture with one thing changed in it, as a stranger probing the importer did. */
function goCopy(change: (go: DatabaseSync) => void): string {
  const path = join(mkdtempSync(join(tmpdir(), 'promptpipe-go-')), 'state.db');
  copyFileSync(GO_SQLITE_FIXTURE, path);
  const go = new DatabaseSync(path);
  try {
    change(go);
  } finally {
    go.close();
  }
  return path;
}

function setStateData(go: DatabaseSync, goId: string, text: string): void {
  go.prepare('update flow_states set state_data = ? where participant_id = ?').run(text, goId);
}

/** Changes values inside a participant's `state_data` (JSON text in JSON text, as Go writes it). */
function editState(go: DatabaseSync, goId: string, edit: (data: Record<string, string>) => void): void {
  const row = go.prepare('select state_data from flow_states where participant_id = ?').get(goId)!;
  const data = JSON.parse(String(row.state_data)) as Record<string, string>;
  edit(data);
  setStateData(go, goId, JSON.stringify(data));
}

/** A dry run, then the import itself, into a new database: the reports, and the Go ids written. */
async function importBoth(from: string): Promise<{ dry: ImportReport; real: ImportReport; written: string[] }> {
  const store = await openStore(tempSqliteUrl());
  try {
    const dry = await importGoStudy(store, { from }, { ...options, dryRun: true });
    const real = await importGoStudy(store, { from }, { ...options, dryRun: false });
    const participants = await store.listParticipants();
    const goIds = await store.extend(goIdQueries).ops.goIdsOf(participants.map((participant) => participant.id));
    return { dry, real, written: participants.map((participant) => goIds.get(participant.id)!).sort() };
  } finally {
    await store.close();
  }
}

/**
 * The participant is reported, each problem naming the Go field, by the dry run as by the real
 * run; nothing of theirs is written and every other participant is imported.
 */
async function expectKeptOut(from: string, goId: string, problems: Array<{ field: string; message: unknown }>) {
  const { dry, real, written } = await importBoth(from);
  expect(dry.problems).toEqual(problems.map((problem) => ({ goId, ...problem })));
  expect(real.problems).toEqual(dry.problems);
  const others = ALL.filter((id) => id !== goId);
  expect(dry.imported.map((imported) => imported.goId)).toEqual(others);
  expect(real.imported.map((imported) => imported.goId)).toEqual(others);
  expect(written).toEqual([...others].sort());
}

describe('a Go database with a damaged value: the participant is reported, the others imported', () => {
  it('state_data cut short: flow_states.state_data is not JSON', async () => {
    const from = goCopy((go) => {
      const row = go.prepare('select state_data from flow_states where participant_id = ?').get(MAYA)!;
      setStateData(go, MAYA, String(row.state_data).slice(0, 200));
    });
    await expectKeptOut(from, MAYA, [
      {
        field: 'flow_states.state_data',
        message: expect.stringMatching(/^not JSON: Unterminated string in JSON at position 200\b/),
      },
    ]);
  });

  it('a malformed userProfile inside state_data: names the key', async () => {
    const from = goCopy((go) =>
      editState(go, DANIEL, (data) => {
        data.userProfile = data.userProfile!.slice(0, 120);
      }),
    );
    await expectKeptOut(from, DANIEL, [
      { field: 'flow_states.state_data.userProfile', message: expect.stringMatching(/^not JSON: /) },
    ]);
  });

  it('a malformed conversationHistory inside state_data: names the key', async () => {
    const from = goCopy((go) =>
      editState(go, PRIYA, (data) => {
        data.conversationHistory = '{"messages":[{"role":"user","content":"hi",';
      }),
    );
    await expectKeptOut(from, PRIYA, [
      { field: 'flow_states.state_data.conversationHistory', message: expect.stringMatching(/^not JSON: /) },
    ]);
  });

  it("a malformed payload_json of a queued reminder: the participant its dedupe key names, the job's id", async () => {
    const from = goCopy((go) =>
      go.prepare("update jobs set payload_json = '{participant_id: 1}' where id = ?").run(DANIEL_REMINDER),
    );
    await expectKeptOut(from, DANIEL, [
      {
        field: 'jobs.payload_json',
        message: expect.stringMatching(
          new RegExp(`^job ${DANIEL_REMINDER}: not JSON: Expected property name or '\\}' in JSON at position 1\\b`),
        ),
      },
    ]);
  });

  it("a past reminder job's unreadable prompt time: the prompt it records would be lost unseen", async () => {
    let jobId = '';
    const from = goCopy((go) => {
      const job = go
        .prepare(
          `select id, payload_json from jobs where kind = 'daily_prompt_reminder' and status = 'canceled'
             and json_extract(payload_json, '$.participant_id') = ? order by id limit 1`,
        )
        .get(PRIYA)!;
      jobId = String(job.id);
      const payload = { ...JSON.parse(String(job.payload_json)), expected_sent_at: 'yesterday' };
      go.prepare('update jobs set payload_json = ? where id = ?').run(JSON.stringify(payload), jobId);
    });
    await expectKeptOut(from, PRIYA, [
      { field: 'jobs.payload_json.expected_sent_at', message: `job ${jobId}: unreadable time "yesterday"` },
    ]);
  });

  it("a schedule at 25:99 in zone Mars/Base: both named, with the Go schedule's id", async () => {
    let goScheduleId = '';
    const from = goCopy((go) =>
      editState(go, MAYA, (data) => {
        const registry = JSON.parse(data.scheduleRegistry!) as Array<Record<string, string>>;
        expect(registry).toHaveLength(1);
        goScheduleId = registry[0]!.id!;
        data.scheduleRegistry = JSON.stringify([{ ...registry[0], fixed_time: '25:99', timezone: 'Mars/Base' }]);
      }),
    );
    await expectKeptOut(from, MAYA, [
      {
        field: 'flow_states.state_data.scheduleRegistry[0].fixed_time',
        message: `schedule ${goScheduleId}: "25:99" is not an HH:MM time (24-hour)`,
      },
      {
        field: 'flow_states.state_data.scheduleRegistry[0].timezone',
        message: `schedule ${goScheduleId}: "Mars/Base" is not an IANA time zone`,
      },
    ]);
  });

  it('state_data that is JSON but not an object of strings ([1,2]): a problem, not an empty import', async () => {
    const from = goCopy((go) => setStateData(go, DANIEL, '[1,2]'));
    await expectKeptOut(from, DANIEL, [
      { field: 'flow_states.state_data', message: 'must be an object (got an array)' },
    ]);
  });

  it('a receipt whose time is not Unix seconds: the dry run names the receipt and its field', async () => {
    let receiptId = 0;
    const from = goCopy((go) => {
      receiptId = Number(
        go.prepare("select min(id) as id from receipts where recipient = '14165550101' and status = 'sent'").get()!.id,
      );
      go.prepare("update receipts set time = 'abc' where id = ?").run(receiptId);
    });
    await expectKeptOut(from, MAYA, [
      { field: 'receipts.time', message: `receipt ${receiptId}: must be Unix seconds, a whole number (got "abc")` },
    ]);
  });

  it('names every problem of one participant at once, its own columns as before', async () => {
    const tom = ALL[4]!;
    const from = goCopy((go) => {
      go.prepare("update conversation_participants set status = 'gone' where id = ?").run(tom);
      setStateData(go, tom, '[1,2]');
    });
    await expectKeptOut(from, tom, [
      { field: 'status', message: 'unknown status "gone"' },
      { field: 'flow_states.state_data', message: 'must be an object (got an array)' },
    ]);
  });

  it('npm run import:go carries on past it, prints the problem and exits 1', async () => {
    const from = goCopy((go) => setStateData(go, DANIEL, '[1,2]'));
    const cli = run(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', '--experimental-strip-types', 'src/cli/import-go.ts', '--from', from],
      { env: { ...process.env, DATABASE_URL: tempSqliteUrl(), DEFAULT_PHONE_REGION: 'US', LOG_LEVEL: 'silent' } },
    );
    const failed = await cli.then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failed).toMatchObject({ code: 1, stderr: '' });
    expect(failed!.stdout).toMatch(/^Imported: 5; already here: 0; problems: 1$/m);
    expect(failed!.stdout).toContain(`${DANIEL} | problem: flow_states.state_data: must be an object (got an array)`);
  });
});
