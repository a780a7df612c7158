import {
  createQueryId,
  type Compilable,
  type CompiledQuery,
  type Insertable,
  type Kysely,
  type QueryResult,
} from 'kysely';
import type { QueryContext, SqlDialect } from './query-context.ts';
import type { Database } from './schema.ts';
import { asFenceFailure, type Fence, FenceFailed, fencedSql } from './fence.ts';

/** Stands for an argument while a query is compiled; identity, never content, marks it. */
class Placeholder {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}

type Slot = { arg: string } | { value: unknown };

interface Plan {
  sql: string;
  slots: Slot[];
  query: CompiledQuery['query'];
}

/**
 * A query built and compiled once per dialect, then run with new arguments: the hot path never
 * pays Kysely's builder and compiler again (decision 009). `build` receives the arguments as
 * placeholders typed as `A`; it must only *pass* them to Kysely (a value in `where`, `values`,
 * `set`, `limit`), never branch on them or compute with them.
 */
export class PreparedQuery<A extends object, O> {
  readonly #build: (db: Kysely<Database>, args: A, dialect: SqlDialect) => Compilable<O>;
  readonly #plans = new Map<SqlDialect, Plan>();
  #fencedPlan: Plan | undefined;

  constructor(build: (db: Kysely<Database>, args: A, dialect: SqlDialect) => Compilable<O>) {
    this.#build = build;
  }

  execute(ctx: QueryContext, args: A): Promise<QueryResult<O>> {
    return settled(() => this.#run(ctx, args, false), same);
  }

  /**
   * A write whose answer the caller does not need. In a pipelined PostgreSQL transaction it
   * resolves once sent, and the next statement goes out behind it without a round trip; if it
   * fails, the transaction does (decision 020).
   */
  write(ctx: QueryContext, args: A): Promise<void> {
    return settled(() => this.#run(ctx, args, true), nothing);
  }

  /**
   * A fence of the unit of work (decision 020): the statement (a select, or a write with
   * `returning`) must yield `expected` rows, or the transaction fails with `FenceFailed`.
   * PostgreSQL checks it on the server (`promptpipe_fence`), so in a pipelined transaction it
   * resolves once sent and `COMMIT` can follow at once; SQLite checks its answer, which it has.
   */
  fenced(ctx: QueryContext, args: A, fence: Fence, expected = 1): Promise<void> {
    if (ctx.dialect !== 'postgres')
      return settled(
        () => this.#run(ctx, args, false),
        (result) => {
          if (result.rows.length !== expected) throw new FenceFailed(fence);
        },
      );
    this.#fencedPlan ??= fencedPlan(this.#plan(ctx));
    const plan = this.#fencedPlan;
    return settled(() => this.#runPlan(ctx, plan, args, true, [expected, fence]), nothing).catch((error: unknown) => {
      throw asFenceFailure(error);
    });
  }

  #run(ctx: QueryContext, args: A, deferred: boolean): Promise<QueryResult<O>> | QueryResult<O> {
    return this.#runPlan(ctx, this.#plan(ctx), args, deferred, []);
  }

  #runPlan(
    ctx: QueryContext,
    plan: Plan,
    args: A,
    deferred: boolean,
    extra: unknown[],
  ): Promise<QueryResult<O>> | QueryResult<O> {
    const parameters = plan.slots.map((slot) =>
      'arg' in slot ? (args as Record<string, unknown>)[slot.arg] : slot.value,
    );
    parameters.push(...extra);
    return this.#runParameters(ctx, plan, parameters, deferred);
  }

  /**
   * A write whose parameters the caller has in the compiled statement's order already (see
   * `argumentOrder`): no arguments object to build and read back.
   */
  writeParameters(ctx: QueryContext, parameters: unknown[]): Promise<void> {
    return settled(() => this.#runParameters(ctx, this.#plan(ctx), parameters, true), nothing);
  }

  /** The argument each parameter of the compiled statement takes, in order (undefined for a constant). */
  argumentOrder(ctx: QueryContext): Array<string | undefined> {
    return this.#plan(ctx).slots.map((slot) => ('arg' in slot ? slot.arg : undefined));
  }

  #runParameters(
    ctx: QueryContext,
    plan: Plan,
    parameters: unknown[],
    deferred: boolean,
  ): Promise<QueryResult<O>> | QueryResult<O> {
    const direct = ctx.direct?.(plan.sql, parameters, deferred);
    if (direct) return direct as QueryResult<O> | Promise<QueryResult<O>>;
    return ctx.db.executeQuery<O>({ sql: plan.sql, parameters, query: plan.query, queryId: createQueryId() });
  }

  rows(ctx: QueryContext, args: A): Promise<O[]> {
    return settled(
      () => this.#run(ctx, args, false),
      (result) => result.rows,
    );
  }

  first(ctx: QueryContext, args: A): Promise<O | undefined> {
    return settled(
      () => this.#run(ctx, args, false),
      (result) => result.rows[0],
    );
  }

  /** Rows an insert, update or delete changed. */
  changed(ctx: QueryContext, args: A): Promise<number> {
    return settled(
      () => this.#run(ctx, args, false),
      (result) => Number(result.numAffectedRows ?? 0n),
    );
  }

  #plan(ctx: QueryContext): Plan {
    let plan = this.#plans.get(ctx.dialect);
    if (plan) return plan;
    const placeholders = new Proxy({} as A, { get: (_, name) => new Placeholder(String(name)) });
    const compiled = this.#build(ctx.db, placeholders, ctx.dialect).compile();
    const slots = compiled.parameters.map((value): Slot =>
      value instanceof Placeholder ? { arg: value.name } : { value },
    );
    plan = { sql: compiled.sql, slots, query: compiled.query };
    this.#plans.set(ctx.dialect, plan);
    if (ctx.dialect === 'postgres') nameStatement(plan.sql);
    return plan;
  }
}

const same = <T>(value: T) => value;
const nothing = () => undefined;

/**
 * `then` of what `run` gives, as a promise. SQLite's statements answer at once (`direct`): their
 * result is not awaited again, which saves a turn of the microtask queue and a promise or two a
 * statement (decision 020). Whatever either throws is a rejection, never a synchronous throw.
 */
function settled<T, U>(run: () => T | Promise<T>, then: (value: T) => U): Promise<U> {
  try {
    const result = run();
    return result instanceof Promise ? result.then(then) : Promise.resolve(then(result));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A PostgreSQL plan wrapped as a fence (`fencedSql`); its two extra parameters come last. */
function fencedPlan(plan: Plan): Plan {
  const sqlText = fencedSql(plan.sql, plan.slots.length);
  nameStatement(sqlText);
  return { ...plan, sql: sqlText };
}

/** PostgreSQL statement names of prepared queries, by SQL text (see `statementName`). */
const statementNames = new Map<string, string>();

function nameStatement(sqlText: string): void {
  if (!statementNames.has(sqlText)) statementNames.set(sqlText, `pp_${statementNames.size + 1}`);
}

/**
 * The server-side name of a prepared query's SQL, or undefined for any other SQL: a PostgreSQL
 * connection parses and plans a named statement once, then only binds and executes it.
 */
export function statementName(sqlText: string): string | undefined {
  return statementNames.get(sqlText);
}

export function prepared<A extends object, O>(
  build: (db: Kysely<Database>, args: A, dialect: SqlDialect) => Compilable<O>,
): PreparedQuery<A, O> {
  return new PreparedQuery(build);
}

/** Prepared queries that differ in shape (which optional clauses, how many rows), one per key. */
export class PreparedFamily<K, A extends object, O> {
  readonly #build: (key: K) => PreparedQuery<A, O>;
  readonly #members = new Map<string, PreparedQuery<A, O>>();
  readonly #limit: number;

  constructor(build: (key: K) => PreparedQuery<A, O>, limit = 64) {
    this.#build = build;
    this.#limit = limit;
  }

  /** The member for `key`; past `limit` shapes, a fresh one each time (compiled per call). */
  of(key: K): PreparedQuery<A, O> {
    const name = JSON.stringify(key);
    let member = this.#members.get(name);
    if (!member) {
      member = this.#build(key);
      if (this.#members.size < this.#limit) this.#members.set(name, member);
    }
    return member;
  }
}

type Row = Record<string, unknown>;

/**
 * A multi-row insert into `table`, prepared once per shape (row count and columns, taken from
 * the first row): `run(ctx, rows)` inserts every row in one statement. Rows of one call must have
 * the same keys. The statement takes its values row by row, column by column (checked once per
 * shape), so each call passes them in that order as they are.
 */
export function preparedInsert<T extends keyof Database & string>(table: T) {
  const family = new PreparedFamily(({ count, columns }: { count: number; columns: string[] }) =>
    prepared((db, a: Row) => {
      const rows = Array.from({ length: count }, (_, index) =>
        Object.fromEntries(columns.map((column) => [column, a[`${index}:${column}`]])),
      );
      // The row type is checked by the callers' `rows` argument; Kysely sees placeholders here.
      return db.insertInto(table).values(rows as never);
    }),
  );
  const rowMajor = new WeakMap<PreparedQuery<Row, unknown>, boolean>();
  return async (ctx: QueryContext, rows: readonly Insertable<Database[T]>[]): Promise<void> => {
    if (rows.length === 0) return;
    const columns = Object.keys(rows[0]!);
    const insert = family.of({ count: rows.length, columns });
    let inOrder = rowMajor.get(insert);
    if (inOrder === undefined) {
      inOrder = insert
        .argumentOrder(ctx)
        .every((name, index) => name === `${Math.floor(index / columns.length)}:${columns[index % columns.length]}`);
      rowMajor.set(insert, inOrder);
    }
    if (inOrder) {
      const width = columns.length;
      const parameters = new Array<unknown>(rows.length * width);
      for (let index = 0; index < parameters.length; index++)
        parameters[index] = (rows[Math.floor(index / width)] as Row)[columns[index % width]!];
      return insert.writeParameters(ctx, parameters);
    }
    const args: Row = {};
    rows.forEach((row, index) => {
      for (const column of columns) args[`${index}:${column}`] = (row as Row)[column];
    });
    await insert.write(ctx, args);
  };
}
