import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from './schema.ts';
import { openNodeSqlite, type NodeSqliteDatabase } from './sqlite-database.ts';
import { sqliteGroupCommit } from './sqlite-group-commit.ts';

type Db = Kysely<Database>;

describe('SQLite group commit', () => {
  let database: NodeSqliteDatabase;
  let db: Db;
  let log: string[];

  const open = async () => {
    database = openNodeSqlite(':memory:');
    log = [];
    db = new Kysely<Database>({
      dialect: new SqliteDialect({ database }),
      log: (event) => void log.push(event.query.sql.split(' ')[0]!.toLowerCase()),
    });
    await sql`create table notes (id text primary key)`.execute(db);
    log = [];
  };
  const insert = (trx: Db, id: string) => sql`insert into notes (id) values (${id})`.execute(trx);
  const stored = async () =>
    (await sql<{ id: string }>`select id from notes order by id`.execute(db)).rows.map((row) => row.id);

  afterEach(async () => {
    await db.destroy();
    await database.close();
  });

  it('commits a lone transaction at once, without a savepoint', async () => {
    await open();
    const transaction = sqliteGroupCommit(db);
    expect(await transaction(async (trx) => (await insert(trx, 'a'), 'done'))).toBe('done');
    expect(log).toEqual(['begin', 'insert', 'commit']);
    await expect(transaction(async (trx) => (await insert(trx, 'b'), await insert(trx, 'a')))).rejects.toThrow(
      /UNIQUE/,
    );
    expect(await stored()).toEqual(['a']); // rolled back whole: 'b' is gone too
    expect(await stored()).toEqual(['a']);
  });

  it('lets transactions asked for meanwhile join one commit; one that fails rolls back alone', async () => {
    await open();
    const transaction = sqliteGroupCommit(db);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = transaction(async (trx) => {
      await insert(trx, 'a');
      await gate; // the others are asked for while this one runs
      return 1;
    });
    const failing = transaction(async (trx) => {
      await insert(trx, 'b');
      throw new Error('this turn failed');
    });
    const third = transaction(async (trx) => (await insert(trx, 'c'), 3));
    release();
    expect(await first).toBe(1);
    await expect(failing).rejects.toThrow('this turn failed');
    expect(await third).toBe(3);
    expect(await stored()).toEqual(['a', 'c']);
    expect(log.filter((statement) => statement === 'begin' || statement === 'commit')).toEqual(['begin', 'commit']);
  });

  it('rolls back a first transaction that fails whole, and lets those queued behind it commit', async () => {
    await open();
    const transaction = sqliteGroupCommit(db);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const failing = transaction(async (trx) => {
      await insert(trx, 'a');
      await gate;
      throw new Error('the first turn failed');
    });
    const second = transaction(async (trx) => (await insert(trx, 'b'), 2));
    release();
    await expect(failing).rejects.toThrow('the first turn failed');
    expect(await second).toBe(2);
    expect(await stored()).toEqual(['b']);
  });

  it('settles every member with the error when the commit itself fails', async () => {
    await open();
    await sql`create table parents (id text primary key)`.execute(db);
    await sql`create table children (parent text references parents (id) deferrable initially deferred)`.execute(db);
    await sql`pragma foreign_keys = on`.execute(db);
    const transaction = sqliteGroupCommit(db);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const fine = transaction(async (trx) => (await insert(trx, 'a'), await gate));
    // A deferred foreign key fails only at COMMIT: the whole group is undone.
    const orphan = transaction((trx) => sql`insert into children (parent) values ('nobody')`.execute(trx));
    release();
    await expect(fine).rejects.toThrow(/FOREIGN KEY/);
    await expect(orphan).rejects.toThrow(/FOREIGN KEY/);
    expect(await stored()).toEqual([]);
    expect(await transaction(async (trx) => (await insert(trx, 'later'), 'ok'))).toBe('ok'); // the connection is usable
  });
});
