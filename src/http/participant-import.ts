import { CsvError, parse } from 'csv-parse/sync';
import { canonicalPhone, type PhoneRegion } from '../core/phone.ts';
import { canonicalTimeZone } from '../core/time-zone.ts';
import type { EnrollmentInput } from '../engine/participant-service.ts';

/** One problem of an import, where a coordinator would look for it: the spreadsheet row and column. */
export interface ImportProblem {
  /** The spreadsheet row: 1 is the header, the first participant is 2. */
  row: number;
  field: string;
  message: string;
}

export const COLUMNS = [
  'phone_number',
  'name',
  'timezone',
  'cohort',
  'gender',
  'ethnicity',
  'background',
  'channel',
  'flow',
] as const;
type ImportColumn = (typeof COLUMNS)[number];
const LIMITS: Record<ImportColumn, number> = {
  phone_number: 40,
  name: 200,
  timezone: 64,
  cohort: 100,
  gender: 100,
  ethnicity: 100,
  background: 2000,
  channel: 40,
  flow: 40,
};
export const MAX_IMPORT_ROWS = 5000;
/** The columns besides `phone_number` (the first), as the missing-header message names them. */
const OPTIONAL_COLUMNS = COLUMNS.slice(1);

/**
 * A CSV of participants (a header row naming any of `COLUMNS`, in any order; `phone_number`
 * required) read into enrolments, with every problem it can find: the header's and every row's,
 * and a broken quote with the rows before it. A file is enrolled whole or not at all, so the
 * coordinator fixes everything at once. National numbers are read in `region`; a number twice in
 * the file, or already enrolled (`taken`), is a problem.
 */
export function readParticipantImport(
  text: string,
  options: { region: PhoneRegion | undefined; taken: ReadonlySet<string> },
): { rows: EnrollmentInput[]; problems: ImportProblem[] } {
  if (text.includes('\uFFFD')) return fail(1, 'body', 'the file is not UTF-8 text: save it as "CSV UTF-8"');
  const { records, unreadable } = readRecords(text);
  const [header, ...data] = records;
  if (!header) return { rows: [], problems: [unreadable ?? missingPhoneColumn(1)] };
  const problems = headerProblems(header);
  const rows: EnrollmentInput[] = [];
  // Too many rows is a refusal of the file's size, not of its content: its rows go unchecked.
  if (data.length > MAX_IMPORT_ROWS)
    problems.push(
      problem(header.row, 'body', `at most ${MAX_IMPORT_ROWS} participants per file (got ${data.length}); split it`),
    );
  else if (data.length === 0 && !unreadable)
    problems.push(problem(header.row + 1, 'body', 'the file has a header but no participants'));
  else {
    const seen = new Map<string, number>();
    for (const record of data) rows.push(readRow(record, header.cells, { ...options, seen, problems }));
  }
  if (unreadable) problems.push(unreadable);
  return { rows, problems };
}

/** One CSV record and the spreadsheet row it fills (blank lines count, a cell of several lines does not). */
interface CsvRecord {
  row: number;
  cells: string[];
}

const CSV_OPTIONS = { bom: true, skip_empty_lines: true, trim: true, relax_column_count: true } as const;

/**
 * The file's records up to the first one that is not CSV (a quote never closed, text after a
 * closing quote): that one is `unreadable`, a problem on the row it starts, and the rest of the
 * file cannot be read.
 */
function readRecords(text: string): { records: CsvRecord[]; unreadable: ImportProblem | null } {
  const records: CsvRecord[] = [];
  // The parser's counters are of records and skipped blank lines: the row is both together.
  const rowOf = (info: { records: number; empty_lines: number }) => info.records + info.empty_lines;
  try {
    parse(text, {
      ...CSV_OPTIONS,
      on_record: (cells: string[], info) => {
        records.push({ row: rowOf(info), cells });
        return null;
      },
    });
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    // The records before this one were read; this one starts on the next row.
    const row = rowOf({ records: Number(error.records), empty_lines: Number(error.empty_lines) }) + 1;
    return { records, unreadable: problem(row, 'body', `not a readable CSV file: ${csvMessage(error)}`) };
  }
  return { records, unreadable: null };
}

/** The parser's message, unless it names a file line (the end of the file, for a quote never closed). */
function csvMessage(error: CsvError): string {
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') return 'a quote (") opened on this row is never closed';
  return error.message;
}

/** A missing `phone_number` column and each unknown column, on the header's row. */
function headerProblems({ row, cells }: CsvRecord): ImportProblem[] {
  const problems = cells.includes('phone_number') ? [] : [missingPhoneColumn(row)];
  for (const column of cells)
    if (!(COLUMNS as readonly string[]).includes(column))
      problems.push(
        problem(row, column, `unknown column ${JSON.stringify(column)}: the columns are ${COLUMNS.join(', ')}`),
      );
  return problems;
}

function missingPhoneColumn(row: number): ImportProblem {
  return problem(
    row,
    'phone_number',
    `the header row must name a phone_number column (and any of ${OPTIONAL_COLUMNS.join(', ')})`,
  );
}

/**
 * One row read into an enrolment, its problems added to `problems`. Without a `phone_number`
 * column (a header problem already) the row's number goes unchecked, its other cells not.
 */
function readRow(
  { row, cells }: CsvRecord,
  header: string[],
  context: {
    region: PhoneRegion | undefined;
    taken: ReadonlySet<string>;
    seen: Map<string, number>;
    problems: ImportProblem[];
  },
): EnrollmentInput {
  const report = (field: string, message: string) => context.problems.push(problem(row, field, message));
  if (cells.length !== header.length) report('body', `has ${cells.length} cells where the header has ${header.length}`);
  const value = (column: ImportColumn) => cells[header.indexOf(column)]?.trim() || null;
  for (const column of COLUMNS) {
    const cell = value(column);
    if (cell === null) continue;
    if (cell.length > LIMITS[column]) report(column, `is longer than ${LIMITS[column]} characters`);
    if (column !== 'phone_number' && /^[=+\-@]/.test(cell))
      report(column, 'starts like a spreadsheet formula (= + - @); remove that first character');
  }
  const phone = header.includes('phone_number') ? checkPhone(value('phone_number'), row, report, context) : null;
  const zone = value('timezone');
  const canonicalZone = zone ? canonicalTimeZone(zone) : null;
  if (zone && !canonicalZone) report('timezone', `"${zone}" is not an IANA time zone (e.g. America/Toronto)`);
  return {
    phoneNumber: phone ?? '',
    name: value('name'),
    timezone: canonicalZone,
    cohort: value('cohort'),
    gender: value('gender'),
    ethnicity: value('ethnicity'),
    background: value('background'),
    channel: value('channel') ?? undefined,
    flow: value('flow') ?? undefined,
  };
}

/** The row's number in canonical form, or null with its problem reported (empty, invalid, twice, enrolled). */
function checkPhone(
  raw: string | null,
  row: number,
  report: (field: string, message: string) => void,
  context: { region: PhoneRegion | undefined; taken: ReadonlySet<string>; seen: Map<string, number> },
): string | null {
  const phone = raw ? canonicalPhone(raw, context.region) : null;
  if (!raw) report('phone_number', 'is empty');
  else if (!phone)
    report(
      'phone_number',
      `"${raw}" is not a valid phone number` +
        (context.region
          ? ` (international, or ${context.region} national)`
          : ' in international format (set DEFAULT_PHONE_REGION for national numbers)'),
    );
  else if (context.seen.has(phone)) report('phone_number', `${phone} is also on row ${context.seen.get(phone)}`);
  else if (context.taken.has(phone)) report('phone_number', `${phone} is already enrolled`);
  if (phone && !context.seen.has(phone)) context.seen.set(phone, row);
  return phone;
}

function problem(row: number, field: string, message: string): ImportProblem {
  return { row, field, message };
}

function fail(row: number, field: string, message: string) {
  return { rows: [], problems: [problem(row, field, message)] };
}

/**
 * Every phone number a file names, read as the import reads them (to look up who is enrolled):
 * the same records, so up to the same broken quote.
 */
export function phonesOf(text: string, region: PhoneRegion | undefined): string[] {
  const [header, ...data] = readRecords(text).records;
  const column = header?.cells.indexOf('phone_number') ?? -1;
  if (column < 0) return [];
  return data.flatMap(({ cells }) => {
    const raw = cells[column];
    const phone = raw ? canonicalPhone(raw, region) : null;
    return phone ? [phone] : [];
  });
}
