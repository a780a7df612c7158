import { DatabaseSync } from 'node:sqlite';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_OPTIONS } from './go-postgres-fixture.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { importGoStudy } from '../../src/migration/go/import-go-study.ts';
import { goIdQueries } from '../../src/store/go-ids-queries.ts';
import { openStore } from '../../src/store/open-store.ts';
import { sayAndWait, startTestServer, tempSqliteUrl, type TestServer } from '../kit/test-server.ts';
import { unzipText } from '../kit/unzip.ts';

// A copy of ../shared/fixtures/go-promptpipe/state.db (its README documents every format).
const FIXTURE = new URL('../fixtures/go-promptpipe/state.db', import.meta.url).pathname;
const NOW = IMPORT_OPTIONS.now;
const url = tempSqliteUrl();
const options = IMPORT_OPTIONS;
let server: TestServer;

beforeAll(async () => {
  const store = await openStore(url);
  try {
    const dry = await importGoStudy(store, { from: FIXTURE }, { ...options, dryRun: true });
    expect(dry.imported).toHaveLength(6);
    expect(await store.countParticipants()).toBe(0); // a dry run writes nothing
    const first = await importGoStudy(store, { from: FIXTURE }, { ...options, dryRun: false });
    expect(first).toMatchObject({ skipped: [], problems: [] });
    const second = await importGoStudy(store, { from: FIXTURE }, { ...options, dryRun: false });
    expect(second).toMatchObject({ imported: [], problems: [] });
    expect(second.skipped.map((skipped) => skipped.reason)).toEqual(Array(6).fill('imported before')); // by Go id
  } finally {
    await store.close();
  }
  // Which module answered, by its prompt: the follow-up on daily prompts, or the intake conversation.
  const provider = createScriptedProvider((request) => {
    const answeredBy = /following up on a person's daily habit/.test(request.messages[0]?.content ?? '')
      ? 'feedback'
      : 'intake';
    return { text: `${answeredBy}: ${request.messages.at(-1)?.content}` };
  });
  server = await startTestServer({ DATABASE_URL: url, CLOCK: 'virtual', CLOCK_START: NOW.toISOString() }, { provider });
});
afterAll(() => server?.close());

const participants = async () =>
  (await server.request('GET', '/conversation/participants')).body.result as Array<Record<string, any>>;

describe('a Go PromptPipe study imported', () => {
  it('keeps every participant with an E.164 phone, their status, sub-state, profile and history', async () => {
    const list = await participants();
    expect(list.map((p) => [p.phone_number, p.name, p.status, p.sub_state, p.timezone])).toEqual([
      ['+14165550101', 'Maya Chen', 'active', 'FEEDBACK', 'America/Toronto'],
      ['+16135550142', 'Chloé Dubois', 'completed', 'FEEDBACK', 'America/Toronto'],
      ['+442079460958', 'Daniel Okafor', 'active', 'FEEDBACK', 'Europe/London'],
      ['+16475550187', 'Priya Nair', 'paused', 'FEEDBACK', 'UTC'],
      ['+12125550147', 'Tom Becker', 'withdrawn', 'FEEDBACK', null],
      ['+16045550199', null, 'active', 'INTAKE', null],
    ]);
    const maya = list[0]!;
    const profile = await server.store.getProfile(maya.id);
    expect(profile).toMatchObject({
      successCount: 12,
      totalPrompts: 17,
      intensity: 'normal',
      tone: { active: ['concise'] },
    });
    const history = (await server.request('GET', `/conversation/participants/${maya.id}/history?all=true`)).body.result
      .messages;
    // Go kept her last 50 messages; the 8 replies before them come from its responses table, the
    // polls of her 17 daily prompts from its reminder jobs.
    expect(history).toHaveLength(75);
    expect(history[0]).toMatchObject({
      role: 'user',
      text: 'personalize first pls',
      created_at: '2026-03-02T14:06:51.000Z',
    });
    expect(history.every((message: { text: string }) => !message.text.startsWith('<Hint:'))).toBe(true);
  });

  it("arms the next daily prompt at the imported time in the schedule's zone, active participants only", async () => {
    const [maya, chloe] = await participants();
    const timers = await server.store.listPendingTimers(maya!.id);
    // 08:30 Toronto minus the 10-minute prep: 08:20 EDT, the same day (it is 08:00 there) = 12:20 UTC.
    expect(timers.map((timer) => [timer.kind, timer.dueAt.toISOString()])).toEqual([
      ['daily-prompt', '2026-03-20T12:20:00.000Z'],
    ]);
    expect(await server.store.listPendingTimers(chloe!.id)).toEqual([]);
  });

  it("keeps receipts as deliveries, responses in transcripts: GET /receipts, /responses answer as Go's", async () => {
    const go = new DatabaseSync(FIXTURE, { readOnly: true });
    const goReceipts = go.prepare('select recipient, status, time from receipts').all();
    const goResponses = go.prepare('select sender, body, time from responses').all();
    go.close();
    const phones = new Set((await participants()).map((p) => p.phone_number));
    const e164 = (address: unknown) => (String(address).startsWith('+') ? String(address) : `+${address}`);
    const sorted = <T>(rows: T[]) => rows.map((row) => JSON.stringify(row)).sort();
    const expectedReceipts = goReceipts
      .map((row) => ({ to: e164(row.recipient), status: row.status, time: row.time }))
      .filter((row) => phones.has(row.to)); // the LID, the operator's test number and the stranger are no participant
    expect(expectedReceipts.length).toBeGreaterThan(600);
    const receipts = (await server.request('GET', '/receipts')).body.result;
    expect(sorted(receipts)).toEqual(sorted(expectedReceipts));
    const expectedResponses = goResponses
      .map((row) => ({ from: row.sender, body: row.body, time: row.time }))
      .filter((row) => phones.has(String(row.from)));
    expect(expectedResponses).toHaveLength(118);
    // The kept history's own times: Go stored a reply there a second or two after it came in.
    const byText = (rows: Array<{ from: unknown; body: unknown; time: unknown }>) =>
      rows
        .map(({ from, body, time }) => ({ key: `${from} ${body}`, time: Number(time) }))
        .sort((a, b) => (a.key === b.key ? a.time - b.time : a.key < b.key ? -1 : 1));
    const responses = byText((await server.request('GET', '/responses')).body.result);
    const expected = byText(expectedResponses);
    expect(responses.map((row) => row.key)).toEqual(expected.map((row) => row.key));
    expect(
      responses.every((row, index) => row.time - expected[index]!.time >= 0 && row.time - expected[index]!.time <= 3),
    ).toBe(true);

    const [maya] = await participants();
    const deliveries = (await server.request('GET', `/conversation/participants/${maya!.id}/deliveries`)).body.result;
    expect(deliveries).toHaveLength(71);
    expect(deliveries[0]).toMatchObject({ status: 'sent', channel: 'whatsapp', delivery_status: 'read' });
  });

  it("keeps each participant's Go id, shown in the study export; does not bring back one deleted here", async () => {
    const response = await server.fetch('/study/export');
    const csv = (await unzipText(Buffer.from(await response.arrayBuffer()))).get('participants.csv')!;
    const rows = parse(csv, { columns: true, bom: true }) as Array<Record<string, string>>;
    expect(rows.map((row) => [row.go_id, row.phone_number])).toEqual([
      ['p_6ddb126738635da7b462fec7b5d13883', '+14165550101'],
      ['p_e42018b77a9c2d8bd0855410951a08a4', '+16135550142'],
      ['p_532a3eabdce57b73c7d2a28f6277ac48', '+442079460958'],
      ['p_6ea029feca8c22ece9ff829b5aa01f6c', '+16475550187'],
      ['p_7df88ee4d9359cc2349c88c778a0241b', '+12125550147'],
      ['p_f89de48b36576c832f1956b8ce727202', '+16045550199'],
    ]);
    const tom = rows.find((row) => row.go_id === 'p_7df88ee4d9359cc2349c88c778a0241b')!;
    expect(await server.request('DELETE', `/conversation/participants/${tom.participant_id}`)).toMatchObject({
      status: 200,
      body: { status: 'ok', message: 'Participant deleted successfully' },
    });
    const again = await importGoStudy(server.store, { from: FIXTURE }, { ...options, dryRun: false });
    expect(again.imported).toEqual([]);
    expect(again.skipped.find((skipped) => skipped.goId === tom.go_id)?.reason).toBe(
      'imported before, deleted here since',
    );
    expect(await server.store.countParticipants()).toBe(5);
  });

  it('continues a feedback conversation and an intake where they were', async () => {
    expect(await sayAndWait(server, '+14165550101', 'did it today')).toEqual(['feedback: did it today']);
    expect(await sayAndWait(server, '+16045550199', 'mornings work best')).toEqual(['intake: mornings work best']);
  });
});

describe('a Go participant already enrolled here with the same phone', () => {
  it('keeps what they have here and gets their Go id: shown in the export, known by it on the next run', async () => {
    const here = await startTestServer();
    try {
      const enrolled = await here.request('POST', '/conversation/participants', { phone_number: '14165550101' });
      const id = enrolled.body.result.id as string;
      const maya = 'p_6ddb126738635da7b462fec7b5d13883';
      await here.settle(); // the greeting
      const history = async () =>
        (await here.request('GET', `/conversation/participants/${id}/history?all=true`)).body.result.messages;
      const before = await history();
      const dry = await importGoStudy(here.store, { from: FIXTURE }, { ...options, dryRun: true });
      expect(dry.skipped).toEqual([
        {
          goId: maya,
          phoneNumber: '+14165550101',
          reason: 'phone already enrolled here: their Go id would be recorded, nothing else imported',
        },
      ]);
      const goIds = here.store.extend(goIdQueries).ops;
      expect(await goIds.findGoId(maya)).toBeUndefined(); // a dry run writes nothing

      const first = await importGoStudy(here.store, { from: FIXTURE }, { ...options, dryRun: false });
      expect(first.skipped.map((skipped) => [skipped.goId, skipped.reason])).toEqual([
        [maya, 'phone already enrolled here: their Go id is recorded, nothing else imported'],
      ]);
      expect(first.imported).toHaveLength(5);
      expect(await goIds.findGoId(maya)).toMatchObject({ participantId: id });
      expect(await history()).toEqual(before); // nothing of theirs from Go
      const response = await here.fetch('/study/export');
      const csv = (await unzipText(Buffer.from(await response.arrayBuffer()))).get('participants.csv')!;
      const rows = parse(csv, { columns: true, bom: true }) as Array<Record<string, string>>;
      expect(rows.find((row) => row.participant_id === id)?.go_id).toBe(maya);

      const second = await importGoStudy(here.store, { from: FIXTURE }, { ...options, dryRun: false });
      expect(second).toMatchObject({ imported: [], problems: [] });
      expect(second.skipped.find((skipped) => skipped.goId === maya)?.reason).toBe('imported before');
      expect(await here.store.countParticipants()).toBe(6);
    } finally {
      await here.close();
    }
  });
});
