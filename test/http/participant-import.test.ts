import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../src/llm/scripted-provider.ts';
import { startTestServer, type TestServer } from '../kit/test-server.ts';
import { waitFor } from '../kit/wait-for.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(
    { DEFAULT_PHONE_REGION: 'US' },
    { provider: createScriptedProvider(() => ({ text: 'Welcome!' })) },
  );
});
afterAll(() => server.close());

const importCsv = (csv: string, query = '') =>
  server.request('POST', `/conversation/participants/import${query}`, csv, { 'content-type': 'text/csv' });
const total = async () => (await server.request('GET', '/conversation/participants')).body.total as number;

const VALID = ['Ada,+14165550201,America/Toronto', 'Bo,(415) 555-0202,america/los_angeles', 'Cy,14165550203,'];

describe('POST /conversation/participants/import', () => {
  it(
    'refuses a file with a bad row, listing every problem and enrolling no one; the fixed file enrols all, in ' +
      'row order',
    async () => {
      const bad = ['name,phone_number,timezone', ...VALID, 'Di,555-01,Mars/Olympus'].join('\r\n');
      const refused = await importCsv(bad);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({
        status: 'error',
        code: 'invalid_request',
        message: expect.stringContaining('nothing was enrolled'),
      });
      expect(refused.body.problems).toEqual([
        { row: 5, field: 'phone_number', message: expect.stringContaining('"555-01" is not a valid phone number') },
        { row: 5, field: 'timezone', message: expect.stringContaining('"Mars/Olympus" is not an IANA time zone') },
      ]);
      expect(await total()).toBe(0);

      const fixed = [
        'name,phone_number,timezone,cohort',
        ...VALID.map((row) => `${row},arm-A`),
        'Di,416-555-0204,Europe/Berlin,arm-B',
      ].join('\r\n');
      const dry = await importCsv(fixed, '?dry_run=true');
      expect(dry).toMatchObject({ status: 200, body: { result: { would_enroll: 4, dry_run: true } } });
      expect(await total()).toBe(0);

      const done = await importCsv(fixed);
      expect(done.status).toBe(201);
      const ids = done.body.result.ids as string[];
      expect(ids).toHaveLength(4);
      const listed = (await server.request('GET', '/conversation/participants')).body.result as Array<{
        id: string;
        phone_number: string;
        timezone: string | null;
        cohort: string;
      }>;
      expect(listed.map((p) => [p.id, p.phone_number, p.timezone, p.cohort])).toEqual([
        [ids[0], '+14165550201', 'America/Toronto', 'arm-A'],
        [ids[1], '+14155550202', 'America/Los_Angeles', 'arm-A'],
        [ids[2], '+14165550203', null, 'arm-A'],
        [ids[3], '+14165550204', 'Europe/Berlin', 'arm-B'],
      ]);
      await waitFor(() => server.sink.delivered.length === 4, { what: 'four greetings' });
    },
  );

  it(
    'names duplicates in the file and against enrolled participants, unknown columns, formulas, a missing ' +
      'header and other encodings',
    async () => {
      const duplicates = await importCsv('phone_number,name\r\n+14165550201,Again\r\n+14165550299,X\r\n4165550299,Y');
      expect(duplicates.body.problems).toEqual([
        { row: 2, field: 'phone_number', message: '+14165550201 is already enrolled' },
        { row: 4, field: 'phone_number', message: '+14165550299 is also on row 3' },
      ]);
      expect((await importCsv('phone_number,arm\r\n+14165550298,A')).body.problems).toEqual([
        { row: 1, field: 'arm', message: expect.stringContaining('unknown column "arm"') },
      ]);
      expect(
        (await importCsv('phone_number,name\r\n+14165550297,"=HYPERLINK(""http://x"",""y"")"')).body.problems,
      ).toEqual([{ row: 2, field: 'name', message: expect.stringContaining('spreadsheet formula') }]);
      expect((await importCsv('name,timezone\r\nAda,UTC')).body.problems).toEqual([
        { row: 1, field: 'phone_number', message: expect.stringContaining('must name a phone_number column') },
      ]);
      const latin1 = Buffer.from('phone_number,name\r\n+14165550296,Jos\xe9\r\n', 'latin1');
      const response = await server.fetch('/conversation/participants/import', {
        method: 'POST',
        body: latin1,
        headers: { 'content-type': 'text/csv' },
      });
      expect(((await response.json()) as { problems: unknown }).problems).toEqual([
        { row: 1, field: 'body', message: expect.stringContaining('not UTF-8') },
      ]);
      expect((await importCsv('x'.repeat(3 * 1024 * 1024))).status).toBe(413);
      expect(await total()).toBe(4);
    },
  );

  it('numbers rows as the spreadsheet does: a broken quote, a blank line and a cell of two lines', async () => {
    const unclosedOnFirstRow = await importCsv('phone_number,name\r\n"+14165550290,Ada\r\n+14165550291,Bo\r\n');
    expect(unclosedOnFirstRow.body.problems).toEqual([
      { row: 2, field: 'body', message: expect.stringContaining('not a readable CSV file') },
    ]);
    // Row 3 is a blank line; row 2 holds one cell of two lines; row 5's quote is never closed.
    const later = await importCsv(
      'phone_number,name\r\n+14165550290,"Ada\nLovelace"\r\n\r\n555-01,Bo\r\n+14165550291,"Cy\r\n+14165550292,Di',
    );
    expect(later.body.problems).toEqual([
      { row: 4, field: 'phone_number', message: expect.stringContaining('"555-01" is not a valid phone number') },
      { row: 5, field: 'body', message: expect.stringContaining('not a readable CSV file') },
    ]);
    expect(await total()).toBe(4);
  });

  it('names every accepted column when the phone_number column is missing', async () => {
    const { problems } = (await importCsv('name,cohort\r\nAda,arm-A')).body as {
      problems: Array<{ row: number; field: string; message: string }>;
    };
    expect(problems).toEqual([{ row: 1, field: 'phone_number', message: expect.any(String) }]);
    const listed = /\(and any of (.+)\)$/.exec(problems[0]!.message)?.[1]?.split(', ');
    expect(listed).toEqual(['name', 'timezone', 'cohort', 'gender', 'ethnicity', 'background', 'channel', 'flow']);
  });

  it('lists unknown columns and every row problem in one answer, and enrols no one', async () => {
    const refused = await importCsv(
      [
        'phone_number,arm,name,Zone',
        '+14165550280,A,Ada,x',
        '555-01,B,Bo,y',
        '+14165550281,C,=cmd,z',
        '+14165550280,D,Di,w',
      ].join('\r\n'),
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'invalid_request',
      message: '5 problem(s) in the file; nothing was enrolled',
    });
    expect(refused.body.problems).toEqual([
      { row: 1, field: 'arm', message: expect.stringContaining('unknown column "arm"') },
      { row: 1, field: 'Zone', message: expect.stringContaining('unknown column "Zone"') },
      { row: 3, field: 'phone_number', message: expect.stringContaining('"555-01" is not a valid phone number') },
      { row: 4, field: 'name', message: expect.stringContaining('spreadsheet formula') },
      { row: 5, field: 'phone_number', message: '+14165550280 is also on row 2' },
    ]);

    // Without its phone_number column a file's other cells are still checked.
    expect((await importCsv('phone,name\r\n+14165550282,=cmd')).body.problems).toEqual([
      { row: 1, field: 'phone_number', message: expect.stringContaining('must name a phone_number column') },
      { row: 1, field: 'phone', message: expect.stringContaining('unknown column "phone"') },
      { row: 2, field: 'name', message: expect.stringContaining('spreadsheet formula') },
    ]);
    expect(await total()).toBe(4);
  });
});
