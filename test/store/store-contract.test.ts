import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allMigrations } from '../../src/store/migrations/index.ts';
import { openStore } from '../../src/store/open-store.ts';
import { PG_URL, POSTGRES_READY } from '../kit/requirements.ts';
import { describeStoreContract } from './store-contract.ts';
import { conversation, participant } from './store-fixtures.ts';

const MIGRATIONS = Object.keys(allMigrations('sqlite'));
const PG_SCHEMA = `store_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const TABLES = [
  'participants',
  'conversations',
  'messages',
  'profiles',
  'schedules',
  'timers',
  'inbox',
  'outbox',
  'turns',
  'tool_calls',
  'event_pages',
  'channel_contacts',
  'delivery_receipts',
  'conversation_leases',
  'crm_appointments',
  'crm_invoices',
  'crm_tickets',
  'crm_slots',
  'crm_customers',
  'flow_states',
  'virtual_clock',
];

const tempDir = mkdtempSync(join(tmpdir(), 'promptpipe-store-'));
let files = 0;
const tempFile = () => join(tempDir, `nested-${++files}`, 'store.sqlite');

let admin: pg.Client;

beforeAll(async () => {
  if (!POSTGRES_READY) return;
  admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
});

afterAll(async () => {
  if (POSTGRES_READY) {
    await admin.query(`drop schema if exists "${PG_SCHEMA}" cascade`);
    await admin.end();
  }
  rmSync(tempDir, { recursive: true, force: true });
});

describeStoreContract('sqlite::memory:', { dialect: 'sqlite', open: () => openStore('sqlite::memory:') });

describeStoreContract('SQLite file', { dialect: 'sqlite', open: () => openStore(`sqlite:${tempFile()}`) });

if (POSTGRES_READY)
  describeStoreContract('PostgreSQL', {
    dialect: 'postgres',
    open: async () => {
      const store = await openStore(PG_URL, { schema: PG_SCHEMA });
      // Every test starts empty: the schema is migrated once, then emptied.
      await admin.query(`truncate ${TABLES.map((t) => `"${PG_SCHEMA}".${t}`).join(', ')} restart identity cascade`);
      return store;
    },
    // A backend of this schema waiting for a lock: its statement already holds the table's own
    // (shared) lock, and waits for a row another transaction locked.
    lockWaiters: async (table) => {
      const { rows } = await admin.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity a
          where a.wait_event_type = 'Lock'
            and exists (select 1 from pg_locks l where l.pid = a.pid and l.granted and l.relation = $1::regclass)`,
        [`"${PG_SCHEMA}".${table}`],
      );
      return rows[0]!.n;
    },
  });

describe('openStore', () => {
  it('keeps the data of a file database across reopening, migrating only once', async () => {
    const path = tempFile();
    const logged: object[] = [];
    const first = await openStore(`sqlite:${path}`, { logger: { info: (obj) => logged.push(obj) } });
    const p = participant();
    await first.insertParticipant(p);
    await first.close();
    await first.close();
    expect(logged).toEqual(MIGRATIONS.map((migration) => ({ migration })));

    const second = await openStore(`sqlite:${path}`, { logger: { info: (obj) => logged.push(obj) } });
    expect(await second.getParticipant(p.id)).toEqual(p);
    await second.close();
    expect(logged).toHaveLength(MIGRATIONS.length);

    const raw = new DatabaseSync(path);
    try {
      expect(
        raw
          .prepare('select name from migrations')
          .all()
          .map((row) => row.name),
      ).toEqual(MIGRATIONS);
      expect(raw.prepare('pragma journal_mode').get()).toEqual({ journal_mode: 'wal' });
    } finally {
      raw.close();
    }
  });

  it.runIf(POSTGRES_READY)('creates a missing PostgreSQL schema and migrates it once', async () => {
    const schema = `${PG_SCHEMA}_b`;
    try {
      const first = await openStore(PG_URL, { schema });
      const p = participant();
      await first.insertParticipant(p);
      await first.close();
      const second = await openStore(PG_URL, { schema });
      expect(await second.getParticipant(p.id)).toEqual(p);
      await second.close();
      const { rows } = await admin.query(`select name from "${schema}".migrations`);
      expect(rows.map((row) => row.name)).toEqual(MIGRATIONS);
      // Nothing leaked into other schemas.
      const elsewhere = await admin.query(
        `select count(*)::int as n from pg_tables where tablename = 'participants' and schemaname = $1`,
        [schema],
      );
      expect(elsewhere.rows[0].n).toBe(1);
    } finally {
      await admin.query(`drop schema if exists "${schema}" cascade`);
    }
  });

  it.runIf(POSTGRES_READY)(
    'parses int8 as numbers for its own pool only, and cascades a deletion to events',
    async () => {
      const store = await openStore(PG_URL, { schema: PG_SCHEMA });
      try {
        expect(pg.types.getTypeParser(20)('5')).toBe('5');
        const p = participant();
        const c = conversation(p.id);
        await store.insertParticipant(p);
        await store.insertConversation(c);
        await admin.query(
          `insert into "${PG_SCHEMA}".event_pages (conversation_id, first_seq, last_seq, events)
           values ($1, 1, 1, '[]')`,
          [c.id],
        );
        expect(await store.deleteParticipant(p.id)).toBe(true);
        const { rows } = await admin.query(
          `select count(*)::int as n from "${PG_SCHEMA}".event_pages where conversation_id = $1`,
          [c.id],
        );
        expect(rows[0].n).toBe(0);
      } finally {
        await store.close();
      }
    },
  );

  it('rejects URLs it cannot open', async () => {
    await expect(openStore('mysql://localhost/db')).rejects.toThrow(/unsupported database URL/);
    await expect(openStore('sqlite:')).rejects.toThrow(/invalid SQLite URL/);
    await expect(openStore(PG_URL, { schema: 'bad-name; drop' })).rejects.toThrow(/invalid PostgreSQL schema/);
  });

  it('fails calls after close', async () => {
    const store = await openStore('sqlite::memory:');
    await store.close();
    await expect(store.ping()).rejects.toThrow();
  });
});
