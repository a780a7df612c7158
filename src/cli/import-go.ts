import { parseArgs } from 'node:util';
import { loadConfig, loadDotEnv } from '../config/config.ts';
import { randomIds } from '../core/clock.ts';
import { canonicalTimeZone } from '../core/time-zone.ts';
import { importGoStudy, reportTable } from '../migration/go/import-go-study.ts';
import { openStore } from '../store/open-store.ts';

const USAGE = [
  'usage: npm run import:go -- --from <Go state.db path | postgres:// URL> ' +
    '[--schema <name>] [--go-timezone <zone>] [--dry-run]',
  '  into DATABASE_URL; DEFAULT_PHONE_REGION reads numbers without a country code',
  '  --schema       PostgreSQL: the schema of the Go tables (default public)',
  "  --go-timezone  PostgreSQL: the Go server's own time zone, its timestamps have none (default UTC)",
].join('\n');

/** Imports a Go PromptPipe study (its SQLite or PostgreSQL database, read-only) into this server's database. */
async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      from: { type: 'string' },
      schema: { type: 'string' },
      'go-timezone': { type: 'string', default: 'UTC' },
      'dry-run': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || !values.from) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const zone = canonicalTimeZone(values['go-timezone']);
  if (!zone) {
    console.error(`--go-timezone: "${values['go-timezone']}" is not an IANA time zone\n${USAGE}`);
    return 2;
  }
  const config = loadConfig(loadDotEnv('.env', process.env));
  const store = await openStore(config.database.url, config.database);
  try {
    const report = await importGoStudy(
      store,
      { from: values.from, schema: values.schema, zone },
      {
        dryRun: values['dry-run'],
        region: config.conversation.phoneRegion,
        ids: randomIds,
        now: new Date(),
        prepMinutes: config.habit.prepMinutes,
        random: Math.random,
        channel: config.whatsapp ? 'whatsapp' : config.twilio ? 'twilio' : 'webhook',
      },
    );
    console.log(reportTable(report, values['dry-run']));
    return report.problems.length > 0 ? 1 : 0;
  } finally {
    await store.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`import failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
