import { parseArgs } from 'node:util';
import { loadConfig, loadDotEnv } from '../config/config.ts';
import { PARTICIPANT_STATUSES, type ParticipantStatus } from '../core/domain.ts';
import { writeStudyExport } from '../flows/habit-coach/study-export.ts';
import { openStore } from '../store/open-store.ts';

const USAGE =
  'usage: npm run export -- --out <dir> [--status active|paused|completed|withdrawn] [--cohort <name>] [--deidentify]';

/** The study export's CSV files written straight from DATABASE_URL (the server may be running or not). */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      status: { type: 'string' },
      cohort: { type: 'string' },
      deidentify: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || !values.out) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  if (values.status && !(PARTICIPANT_STATUSES as readonly string[]).includes(values.status)) {
    console.error(`--status: must be one of ${PARTICIPANT_STATUSES.join(', ')}\n${USAGE}`);
    return 2;
  }
  const config = loadConfig(loadDotEnv('.env', process.env));
  const store = await openStore(config.database.url, config.database);
  try {
    const options = {
      status: values.status as ParticipantStatus | undefined,
      cohort: values.cohort,
      deidentify: values.deidentify,
    };
    const written = await writeStudyExport(store, options, values.out);
    console.log(`wrote ${written.join(', ')} to ${values.out}`);
    return 0;
  } finally {
    await store.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`export failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
