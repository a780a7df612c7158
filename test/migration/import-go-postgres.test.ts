// @requires postgres
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importGoStudy } from '../../src/migration/go/import-go-study.ts';
import type { GoSource } from '../../src/migration/go/read-go-study.ts';
import { GoDatabaseError } from '../../src/store/go-database-check.ts';
import { goIdQueries } from '../../src/store/go-ids-queries.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import { pgSchemas } from '../kit/pg-schemas.ts';
import { PG_URL } from '../kit/requirements.ts';
import { startTestServer, tempSqliteUrl } from '../kit/test-server.ts';
import { dropSchema, GO_SQLITE_FIXTURE, loadGoFixtureIntoPostgres, IMPORT_OPTIONS } from './go-postgres-fixture.ts';
import { expectAdherenceAsGo } from './go-study-adherence.ts';

const run = promisify(execFile);
const SCHEMA = `go_source_${randomUUID().slice(0, 8)}`;
const options = IMPORT_OPTIONS;
const targets = pgSchemas('go_target');

beforeAll(() => loadGoFixtureIntoPostgres(PG_URL, SCHEMA));
afterAll(async () => {
  await dropSchema(PG_URL, SCHEMA);
  await targets.dropAll();
});

/** Everything an import wrote, without our generated ids, participant by participant. */
async function imported(source: GoSource) {
  const store = await openStore(tempSqliteUrl());
  try {
    const report = await importGoStudy(store, source, { ...options, dryRun: false });
    expect(report.problems).toEqual([]);
    return await contents(store);
  } finally {
    await store.close();
  }
}

async function contents(store: Store) {
  const participants = await store.listParticipants();
  const goIds = await store.extend(goIdQueries).ops.goIdsOf(participants.map((p) => p.id));
  return Promise.all(
    participants.map(async ({ id, ...participant }) => {
      const { id: _c, participantId: _p, ...conversation } = (await store.findConversationByParticipant(id))!;
      const { participantId: _q, ...profile } = (await store.getProfile(id))!;
      return {
        goId: goIds.get(id),
        participant,
        conversation,
        messages: (await store.listMessages(_c)).map(({ role, text, source, createdAt }) => ({
          role,
          text,
          source,
          createdAt,
        })),
        profile,
        schedules: (await store.listSchedules(id)).map(({ id: _s, participantId: _r, ...schedule }) => schedule),
        timers: (await store.listPendingTimers(id)).map(({ kind, dueAt }) => ({ kind, dueAt })),
        deliveries: (await store.listOutbox(_c)).map(
          ({ idempotencyKey, sentAt, deliveryStatus, deliveryStatusAt }) => ({
            idempotencyKey,
            sentAt,
            deliveryStatus,
            deliveryStatusAt,
          }),
        ),
      };
    }),
  );
}

/** A digest of every Go table: what the importer must not change. */
async function digest(): Promise<string> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const tables = ['conversation_participants', 'flow_states', 'jobs', 'receipts', 'responses', 'registered_hooks'];
    const parts: string[] = [];
    for (const table of tables) {
      const sql = `select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as d
                     from "${SCHEMA}".${table} t`;
      parts.push((await client.query<{ d: string }>(sql)).rows[0]!.d);
    }
    return parts.join(',');
  } finally {
    await client.end();
  }
}

describe('a Go PromptPipe study on PostgreSQL', () => {
  it('imports exactly what the same study imports from SQLite, and writes nothing there', async () => {
    const before = await digest();
    const fromSqlite = await imported({ from: GO_SQLITE_FIXTURE });
    const fromPostgres = await imported({ from: PG_URL, schema: SCHEMA });
    expect(fromSqlite).toHaveLength(6);
    expect(fromSqlite.map((p) => p.messages.length)).toEqual([75, 80, 58, 53, 15, 7]); // with 69 prompts' polls
    expect(fromSqlite.map((p) => p.deliveries.length)).toEqual([71, 76, 62, 55, 15, 4]);
    expect(fromPostgres).toEqual(fromSqlite);
    expect(await digest()).toBe(before);
  });

  it("into a PostgreSQL store: the overview and prompts.csv count Go's prompts, once if imported twice", async () => {
    const target = targets.next();
    const store = await openStore(target.DATABASE_URL!, { schema: target.DATABASE_SCHEMA });
    try {
      const dry = await importGoStudy(store, { from: PG_URL, schema: SCHEMA }, { ...options, dryRun: true });
      expect(dry.imported.map((item) => item.dailyPrompts.imported)).toEqual([17, 17, 17, 14, 4, 0]);
      expect(await store.countParticipants()).toBe(0);
      for (let run = 0; run < 2; run += 1)
        await importGoStudy(store, { from: PG_URL, schema: SCHEMA }, { ...options, dryRun: false });
    } finally {
      await store.close();
    }
    const server = await startTestServer({ ...target, CLOCK: 'virtual', CLOCK_START: options.now.toISOString() });
    try {
      await expectAdherenceAsGo(server);
    } finally {
      await server.close();
    }
  });

  it('is refused as our own database, with nothing written to it', async () => {
    const before = await digest();
    await expect(openStore(PG_URL, { schema: SCHEMA })).rejects.toThrow(GoDatabaseError);
    expect(await digest()).toBe(before);
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const ours = await client.query(
        'select 1 from information_schema.tables where table_schema = $1 and table_name = $2',
        [SCHEMA, 'migrations'],
      );
      expect(ours.rowCount).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('reads its timestamps in the Go server’s zone (they carry none there)', async () => {
    const enrolledAt = async (zone?: string) => {
      const store = await openStore(tempSqliteUrl());
      try {
        const report = await importGoStudy(store, { from: PG_URL, schema: SCHEMA, zone }, { ...options, dryRun: true });
        return report.imported[0]!.participant.enrolledAt.getTime();
      } finally {
        await store.close();
      }
    };
    expect((await enrolledAt('America/Toronto')) - (await enrolledAt())).toBe(5 * 3_600_000); // EST in early March
  });

  it('is what npm run import:go reads from a postgres:// URL, its schema and zone named', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--disable-warning=ExperimentalWarning',
        '--experimental-strip-types',
        'src/cli/import-go.ts',
        '--from',
        PG_URL,
        '--schema',
        SCHEMA,
        '--go-timezone',
        'UTC',
        '--dry-run',
      ],
      { env: { ...process.env, DATABASE_URL: tempSqliteUrl(), DEFAULT_PHONE_REGION: 'US', LOG_LEVEL: 'silent' } },
    );
    expect(stdout).toMatch(/^Would import: 6; already here: 0; problems: 0$/m);
    expect(stdout).toContain('p_6ddb126738635da7b462fec7b5d13883 | +14165550101 | active | FEEDBACK');
  });
});
