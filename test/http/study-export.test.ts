import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_FILES } from '../../src/flows/habit-coach/study-export.ts';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { sayAndWait, startTestServer, type TestServer } from '../kit/test-server.ts';
import { unzipText } from '../kit/unzip.ts';

const PHONE = '+14165550191';
let server: TestServer;
let participantId: string;

beforeAll(async () => {
  server = await startTestServer(
    {},
    { provider: createScriptedProvider((request) => ({ text: `echo: ${request.messages.at(-1)?.content}` })) },
  );
  participantId = (await server.request('POST', '/conversation/participants', { phone_number: PHONE, name: 'Ada' }))
    .body.result.id;
  await server.sink.waitFor(1);
  await sayAndWait(server, PHONE, 'walked 20 minutes');
  await sayAndWait(server, PHONE, '=HYPERLINK("http://evil.example","click")');
});
afterAll(() => server.close());

async function exportFiles(query = '') {
  const response = await server.fetch(`/study/export${query}`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/zip');
  expect(response.headers.get('content-disposition')).toMatch(
    /^attachment; filename="promptpipe-study-\d{4}-\d{2}-\d{2}/,
  );
  const files = await unzipText(Buffer.from(await response.arrayBuffer()));
  return new Map(
    [...files].map(([name, text]) => [
      name,
      { text, rows: parse(text, { columns: true, bom: true }) as Record<string, string>[] },
    ]),
  );
}

describe('GET /study/export', () => {
  it("is a ZIP of CSVs that re-read give the API's transcript, with a codebook naming every column", async () => {
    const files = await exportFiles();
    expect([...files.keys()]).toEqual([
      'participants.csv',
      'messages.csv',
      'prompts.csv',
      'poll_answers.csv',
      'profile_changes.csv',
      'tone.csv',
      'turns.csv',
      'tool_calls.csv',
      'deliveries.csv',
      'codebook.csv',
    ]);
    expect(files.get('participants.csv')!.rows).toEqual([
      expect.objectContaining({
        participant_id: participantId,
        phone_number: PHONE,
        name: 'Ada',
        status: 'active',
        sub_state: 'INTAKE',
      }),
    ]);

    const history = (await server.request('GET', `/conversation/participants/${participantId}/history?all=true`)).body
      .result.messages as Array<{ text: string; seq: number }>;
    const messages = files.get('messages.csv')!.rows;
    expect(messages.map((row) => Number(row.seq))).toEqual(history.map((message) => message.seq));
    expect(messages.map((row) => row.text)).toEqual(
      history.map((message) => (message.text.startsWith('=') ? `'${message.text}` : message.text)),
    );
    // A spreadsheet will not run it.
    expect(messages.map((row) => row.text)).toContain('\'=HYPERLINK("http://evil.example","click")');
    expect(files.get('turns.csv')!.rows.filter((row) => row.trigger === 'message')).toHaveLength(2);
    expect(files.get('turns.csv')!.rows.every((row) => row.attempts === '1')).toBe(true);
    const deliveries = files.get('deliveries.csv')!.rows;
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.every((row) => row.conversation_id === messages[0]!.conversation_id)).toBe(true);

    const codebook = files.get('codebook.csv')!.rows;
    for (const [name, { text }] of files) {
      if (name === 'codebook.csv') continue;
      const header = text.split('\r\n')[0]!.split(',');
      expect(
        codebook.filter((row) => row.file === name).map((row) => row.column),
        name,
      ).toEqual(header);
    }
    expect(codebook.every((row) => row.type && row.meaning)).toBe(true);
    // An enum column lists the values it takes; no other column does.
    const enums = codebook.filter((row) => row.type === 'enum');
    expect(enums.length).toBeGreaterThan(10);
    expect(enums.filter((row) => !row.allowed_values)).toEqual([]);
    expect(codebook.filter((row) => row.type !== 'enum' && row.allowed_values)).toEqual([]);
    expect(codebook.find((row) => row.file === 'prompts.csv' && row.column === 'answer')).toMatchObject({
      allowed_values: 'Done | Not yet | Next time', // Next time: a Go study's, imported
    });
  });

  it('refuses a query it does not understand, naming the field', async () => {
    expect(await server.request('GET', '/study/export?deidentify=maybe')).toMatchObject({
      status: 400,
      body: { field: 'deidentify' },
    });
    expect(await server.request('GET', '/study/export?status=gone')).toMatchObject({
      status: 400,
      body: { field: 'status' },
    });
    expect(await server.request('GET', '/study/export?cohort=')).toMatchObject({
      status: 400,
      body: { field: 'cohort' },
    });
  });

  it('de-identified, leaves out phones, names and free text, and the codebook with them', async () => {
    const files = await exportFiles('?deidentify=true');
    expect(Object.keys(files.get('participants.csv')!.rows[0]!)).not.toContain('phone_number');
    expect(Object.keys(files.get('messages.csv')!.rows[0]!)).not.toContain('text');
    const personal = EXPORT_FILES.flatMap((exported) =>
      exported.columns.filter((column) => column.personal).map((column) => `${exported.name}:${column.name}`),
    );
    expect(
      files
        .get('codebook.csv')!
        .rows.map((row) => `${row.file}:${row.column}`)
        .filter((key) => personal.includes(key)),
    ).toEqual([]);
    expect([...files.values()].some(({ text }) => text.includes(PHONE) || text.includes('walked 20 minutes'))).toBe(
      false,
    );
  });
});

describe('spreadsheetSafe', () => {
  it('defuses formulas but leaves numbers and phone numbers as they are', async () => {
    const { spreadsheetSafe } = await import('../../src/flows/habit-coach/study-export.ts');
    for (const formula of ['=1+1', '+cmd|" /C calc"!A0', '-2+3', '@SUM(A1)', '\t=1'])
      expect(spreadsheetSafe(formula), formula).toBe(`'${formula}`);
    for (const plain of ['+14165550123', '-3', '+1 (416) 555-0123', 'walked', ''])
      expect(spreadsheetSafe(plain), plain).toBe(plain);
  });
});

describe('writeStudyExport (npm run export)', () => {
  it('writes the same files as the download, straight from the database', async () => {
    const { mkdtempSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { writeStudyExport } = await import('../../src/flows/habit-coach/study-export.ts');
    const directory = join(mkdtempSync(join(tmpdir(), 'export-')), 'study');
    const written = await writeStudyExport(server.store, { deidentify: false }, directory);
    const downloaded = await exportFiles();
    expect(written).toEqual([...downloaded.keys()]);
    for (const name of written)
      expect(readFileSync(join(directory, name), 'utf8'), name).toBe(downloaded.get(name)!.text);
  });
});
