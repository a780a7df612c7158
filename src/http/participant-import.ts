import { parse } from 'csv-parse/sync';
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

const COLUMNS = [
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

/**
 * A CSV of participants (a header row naming any of `COLUMNS`, in any order; `phone_number`
 * required) read into enrolments, with every problem of every row: a file is enrolled whole or
 * not at all, so the coordinator fixes everything at once. National numbers are read in
 * `region`; a number twice in the file, or already enrolled (`taken`), is a problem.
 */
export function readParticipantImport(
  text: string,
  options: { region: PhoneRegion | undefined; taken: ReadonlySet<string> },
): { rows: EnrollmentInput[]; problems: ImportProblem[] } {
  if (text.includes('\uFFFD')) return fail(1, 'body', 'the file is not UTF-8 text: save it as "CSV UTF-8"');
  let records: string[][];
  try {
    records = parse(text, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: true }) as string[][];
  } catch (error) {
    return fail(1, 'body', `not a readable CSV file: ${(error as Error).message}`);
  }
  const [header, ...data] = records;
  if (!header || !header.includes('phone_number'))
    return fail(
      1,
      'phone_number',
      'the header row must name a phone_number column (and any of name, timezone, gender, ethnicity, ' +
        'background, channel, flow)',
    );
  const unknown = header.filter((column) => !(COLUMNS as readonly string[]).includes(column));
  if (unknown.length > 0)
    return fail(
      1,
      unknown[0]!,
      `unknown column(s) ${unknown.map((column) => JSON.stringify(column)).join(', ')}: ` +
        `the columns are ${COLUMNS.join(', ')}`,
    );
  if (data.length === 0) return fail(2, 'body', 'the file has a header but no participants');
  if (data.length > MAX_IMPORT_ROWS)
    return fail(1, 'body', `at most ${MAX_IMPORT_ROWS} participants per file (got ${data.length}); split it`);
  const problems: ImportProblem[] = [];
  const rows: EnrollmentInput[] = [];
  const seen = new Map<string, number>();
  data.forEach((cells, index) => {
    const row = index + 2;
    const problem = (field: string, message: string) => problems.push({ row, field, message });
    if (cells.length !== header.length)
      problem('body', `has ${cells.length} cells where the header has ${header.length}`);
    const value = (column: ImportColumn) => cells[header.indexOf(column)]?.trim() || null;
    for (const column of COLUMNS) {
      const cell = value(column);
      if (cell === null) continue;
      if (cell.length > LIMITS[column]) problem(column, `is longer than ${LIMITS[column]} characters`);
      if (column !== 'phone_number' && /^[=+\-@]/.test(cell))
        problem(column, 'starts like a spreadsheet formula (= + - @); remove that first character');
    }
    const raw = value('phone_number');
    const phone = raw ? canonicalPhone(raw, options.region) : null;
    if (!raw) problem('phone_number', 'is empty');
    else if (!phone)
      problem(
        'phone_number',
        `"${raw}" is not a valid phone number` +
          (options.region
            ? ` (international, or ${options.region} national)`
            : ' in international format (set DEFAULT_PHONE_REGION for national numbers)'),
      );
    else if (seen.has(phone)) problem('phone_number', `${phone} is also on row ${seen.get(phone)}`);
    else if (options.taken.has(phone)) problem('phone_number', `${phone} is already enrolled`);
    if (phone && !seen.has(phone)) seen.set(phone, row);
    const zone = value('timezone');
    const canonicalZone = zone ? canonicalTimeZone(zone) : null;
    if (zone && !canonicalZone) problem('timezone', `"${zone}" is not an IANA time zone (e.g. America/Toronto)`);
    rows.push({
      phoneNumber: phone ?? '',
      name: value('name'),
      timezone: canonicalZone,
      cohort: value('cohort'),
      gender: value('gender'),
      ethnicity: value('ethnicity'),
      background: value('background'),
      channel: value('channel') ?? undefined,
      flow: value('flow') ?? undefined,
    });
  });
  return { rows, problems };
}

function fail(row: number, field: string, message: string) {
  return { rows: [], problems: [{ row, field, message }] };
}

/** Every phone number a file names, read as the import reads them (to look up who is enrolled). */
export function phonesOf(text: string, region: PhoneRegion | undefined): string[] {
  try {
    const records = parse(text, {
      bom: true,
      skip_empty_lines: true,
      trim: true,
      relax_column_count: true,
      columns: true,
    }) as Array<Record<string, string>>;
    return records.flatMap((record) => {
      const phone = record.phone_number ? canonicalPhone(record.phone_number, region) : null;
      return phone ? [phone] : [];
    });
  } catch {
    return [];
  }
}
