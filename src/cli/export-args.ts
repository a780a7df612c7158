import { parseArgs } from 'node:util';
import { PARTICIPANT_STATUSES, type ParticipantStatus } from '../core/domain.ts';

export const EXPORT_USAGE =
  'usage: npm run export -- --out <dir> [--status active|paused|completed|withdrawn] [--cohort <name>]\n' +
  '                         [--from <time or date>] [--to <time or date>] [--deidentify]\n' +
  '  --from, --to: an ISO 8601 time with its offset (2026-06-01T09:00:00-04:00) or a date (2026-06-01),\n' +
  '                a whole day in STUDY_TIMEZONE; both ends included';

export interface ExportArgs {
  out: string;
  status: ParticipantStatus | undefined;
  cohort: string | undefined;
  /** Read with the study's zone (`exportPeriod`) once the configuration is loaded. */
  from: string | undefined;
  to: string | undefined;
  deidentify: boolean;
}

export type ParsedExportArgs = { ok: true; args: ExportArgs } | { ok: false; help: boolean; problem?: string };

/** `npm run export`'s options; each problem names its option. */
export function parseExportArgs(argv: string[]): ParsedExportArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        out: { type: 'string' },
        status: { type: 'string' },
        cohort: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        deidentify: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    return { ok: false, help: false, problem: (error as Error).message };
  }
  if (values.help) return { ok: false, help: true };
  if (!values.out) return { ok: false, help: false, problem: '--out: is required' };
  if (values.status !== undefined && !(PARTICIPANT_STATUSES as readonly string[]).includes(values.status))
    return { ok: false, help: false, problem: `--status: must be one of ${PARTICIPANT_STATUSES.join(', ')}` };
  if (values.cohort !== undefined && values.cohort.length === 0)
    return { ok: false, help: false, problem: '--cohort: must not be empty' };
  return {
    ok: true,
    args: {
      out: values.out,
      status: values.status as ParticipantStatus | undefined,
      cohort: values.cohort,
      from: values.from,
      to: values.to,
      deidentify: values.deidentify,
    },
  };
}
