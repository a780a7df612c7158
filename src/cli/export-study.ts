import { loadConfig, loadDotEnv } from '../config/config.ts';
import { isAppError } from '../core/errors.ts';
import { exportPeriod } from '../flows/habit-coach/export-period.ts';
import { EXPORT_USAGE, parseExportArgs } from './export-args.ts';

/** The study export's CSV files written straight from DATABASE_URL (the server may be running or not). */
async function main(): Promise<number> {
  const parsed = parseExportArgs(process.argv.slice(2));
  if (!parsed.ok) {
    console.error(parsed.problem ? `${parsed.problem}\n${EXPORT_USAGE}` : EXPORT_USAGE);
    return parsed.help ? 0 : 2;
  }
  const { args } = parsed;
  const config = loadConfig(loadDotEnv('.env', process.env));
  let period;
  try {
    period = exportPeriod(args.from, args.to, config.study.timeZone);
  } catch (error) {
    if (!isAppError(error)) throw error;
    console.error(`--${error.message}\n${EXPORT_USAGE}`);
    return 2;
  }
  // Loaded once the options are known to be good, so a mistake is pointed out at once.
  const { openStore } = await import('../store/open-store.ts');
  const { writeStudyExport } = await import('../flows/habit-coach/study-export.ts');
  const store = await openStore(config.database.url, config.database);
  try {
    const options = { status: args.status, cohort: args.cohort, deidentify: args.deidentify, period };
    const written = await writeStudyExport(store, options, args.out);
    console.log(`wrote ${written.join(', ')} to ${args.out}`);
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
