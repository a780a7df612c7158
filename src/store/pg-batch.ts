import pg from 'pg';
import pgUtils from 'pg/lib/utils.js';
import { isQueryReadTimeout } from './db-errors.ts';

/** One statement of a batch: its SQL, parameters, and the server-side name it is prepared under, if any. */
export interface BatchStatement {
  text: string;
  values: readonly unknown[];
  name?: string;
}

/**
 * Parameters as `pg` puts them on the wire (text, a Buffer or null). It throws for a value `pg`
 * cannot write (a BigInt inside JSON, a cycle): the caller learns it before anything is sent, as
 * it would from `pg`'s own query.
 */
export const serializeParameters = (values: readonly unknown[]): unknown[] =>
  values.map((value) => pgUtils.prepareValue(value));

/** A statement's answer, as `pg` gives it for a query of its own. */
export interface BatchAnswer {
  command: string;
  rowCount: number | null;
  rows: Record<string, unknown>[];
}

/** What a statement behind the failing one of its batch rejects with: the server never ran it. */
export class SkippedAfterFailure extends Error {
  constructor() {
    super('not run: an earlier statement of its batch failed');
    this.name = 'SkippedAfterFailure';
  }
}

interface Wire {
  close(message: { type: 'S'; name: string }): void;
  stream: { cork(): void; uncork(): void; destroy(): void };
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(message: { text: string; name: string }): void;
  bind(message: { portal: string; statement: string; values: readonly unknown[]; valueMapper: unknown }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  sync(): void;
}

export interface BatchSettled {
  resolve(answer: BatchAnswer): void;
  reject(error: unknown): void;
}

/** Where a batch's rows get their column parsers: the client's (the pool's int8 parser among them). */
export interface TypeParsers {
  getTypeParser(oid: number, format?: 'text' | 'binary'): unknown;
}

/** A column of a RowDescription, as `pg` parses it. */
interface Field {
  name: string;
  dataTypeID: number;
}

/** A statement's result columns as its connection described them: each column's name and parser. */
interface Shape {
  names: readonly string[];
  parsers: ReadonlyArray<(text: string) => unknown>;
}

/** The shape of a statement that returns no rows (the server answered its Describe with NoData). */
const NO_ROWS: Shape = { names: [], parsers: [] };

/** What a batch knows of a connection's named statements beyond what `pg` keeps. */
interface Named {
  /**
   * The result shape of each named statement the connection described. A prepared statement's
   * result columns are fixed when it is parsed, so its later uses skip Describe: no
   * RowDescription for the server to send and this process to read and turn into parsers each time.
   */
  described: Map<string, Shape>;
  /**
   * The names whose Parse failed with its statement: the server may or may not have prepared
   * them (an error in Bind or Execute leaves the name prepared). The next Parse of such a name is
   * preceded by a Close, which the server accepts for a name it does not know.
   */
  inDoubt: Set<string>;
}

const named = new WeakMap<Wire, Named>();

function namedOn(wire: Wire): Named {
  let known = named.get(wire);
  if (!known) named.set(wire, (known = { described: new Map(), inDoubt: new Set() }));
  return known;
}

/** Results come as text (a batch never asks for binary), parsed by the client's parsers. */
function shapeOf(fields: readonly Field[], types: TypeParsers): Shape {
  return {
    names: fields.map((field) => field.name),
    parsers: fields.map((field) => types.getTypeParser(field.dataTypeID, 'text') as (text: string) => unknown),
  };
}

/** A row as `pg` builds it: the columns in order, each parsed (null stays null). */
function rowOf(shape: Shape, values: ReadonlyArray<string | null>): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (let index = 0; index < values.length; index++) {
    const text = values[index]!;
    row[shape.names[index]!] = text === null ? null : shape.parsers[index]!(text);
  }
  return row;
}

/** A command tag ('INSERT 0 2', 'UPDATE 1', 'BEGIN') as `pg` reads it: the command, and the row count if any. */
const COMMAND_TAG = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/;

/**
 * Several statements in one message exchange with PostgreSQL (decision 020): each statement's
 * Parse (unless its name is prepared already), Bind, Describe (unless the connection described
 * its name already) and Execute, then a single Sync. The server answers the whole batch in one
 * flush, where `pg`'s pipeline mode syncs each statement and the server flushes each answer on
 * its own: a read, a wake-up and a parse in this process per statement. Inside a transaction the
 * batch's statements are the transaction's; the first that fails makes the server skip the rest
 * up to the Sync (they reject with `SkippedAfterFailure`), as `pg` would have them fail with
 * "current transaction is aborted".
 *
 * It is a `pg.Query` only so that a client in pipeline mode accepts it (it refuses other
 * submittables, which may hold a portal open across round trips; a batch holds none).
 */
export class PgBatch extends pg.Query {
  /** What the batch sends, in order. */
  readonly statements: readonly BatchStatement[];
  readonly #settled: BatchSettled[];
  readonly #types: TypeParsers;
  /** Statements parsed under a name by this batch, by index. */
  readonly #parsing = new Map<number, string>();
  /** By index, the shape of each statement sent without Describe (its connection's, from an earlier use). */
  readonly #known: Array<Shape | undefined> = [];
  #wire: Wire | undefined;
  #answered = 0;
  /** The current statement's shape, from its RowDescription. */
  #shape: Shape | undefined;
  #rows: Record<string, unknown>[] = [];
  /** A column parser's failure on the current statement's rows: the statement fails, the exchange goes on. */
  #rowError: { error: unknown } | undefined;
  /** Told once the batch ended: null, or the first failure (`pg` wraps it with its read timeout). */
  callback: ((error: Error | null) => void) | undefined;

  constructor(statements: readonly BatchStatement[], settled: BatchSettled[], types: TypeParsers) {
    super({ text: 'batch' });
    this.statements = statements;
    this.#settled = settled;
    this.#types = types;
  }

  // A property, as `pg`'s types declare it.
  override submit = (connection: pg.Connection): Error | null => {
    const wire = connection as unknown as Wire;
    let values: unknown[][];
    try {
      values = this.statements.map((statement) => serializeParameters(statement.values));
    } catch (error) {
      return error as Error; // as `pg`'s own query: nothing is sent, the batch fails
    }
    this.#wire = wire;
    wire.stream.cork();
    try {
      this.statements.forEach((statement, index) => this.#write(wire, statement, values[index]!, index));
      wire.sync();
    } finally {
      wire.stream.uncork();
    }
    return null;
  };

  #write(wire: Wire, { text, name = '' }: BatchStatement, values: readonly unknown[], index: number): void {
    const prepared = name !== '' && Boolean(wire.parsedStatements[name] ?? wire.submittedNamedStatements[name]);
    if (!prepared) {
      if (name && named.get(wire)?.inDoubt.delete(name)) wire.close({ type: 'S', name });
      wire.parse({ text, name });
      if (name) {
        named.get(wire)?.described.delete(name); // described again with its new Parse
        wire.submittedNamedStatements[name] = text;
        this.#parsing.set(index, name);
      }
    }
    wire.bind({ portal: '', statement: name, values, valueMapper: undefined });
    const known = prepared ? named.get(wire)?.described.get(name) : undefined;
    if (known) this.#known[index] = known;
    else wire.describe({ type: 'P', name: '' });
    wire.execute({ portal: '', rows: 0 });
  }

  handleRowDescription(message: { fields: Field[] }): void {
    this.#shape = shapeOf(message.fields, this.#types);
    this.#describe(this.#shape);
  }

  handleDataRow(message: { fields: Array<string | null> }): void {
    if (this.#rowError) return;
    try {
      this.#rows.push(rowOf((this.#shape ?? this.#known[this.#answered])!, message.fields));
    } catch (error) {
      // As `pg`'s own query: a value its parser refuses (an int8 beyond 2^53) fails the statement.
      this.#rowError = { error };
    }
  }

  handleCommandComplete(message: { text: string }): void {
    // Described, and no RowDescription came: the server answered its Describe with NoData.
    if (!this.#shape && !this.#known[this.#answered]) this.#describe(NO_ROWS);
    const tag = COMMAND_TAG.exec(message.text);
    const count = tag?.[3] ?? tag?.[2];
    this.#answer(tag?.[1] ?? '', count === undefined ? null : Number(count));
  }

  handleEmptyQuery(): void {
    this.#answer('', null);
  }

  /** Remembers the current statement's shape for its name on this connection. */
  #describe(shape: Shape): void {
    const name = this.statements[this.#answered]?.name;
    if (name && this.#wire) namedOn(this.#wire).described.set(name, shape);
  }

  #answer(command: string, rowCount: number | null): void {
    const settled = this.#settled[this.#answered];
    if (this.#rowError) settled?.reject(this.#rowError.error);
    else settled?.resolve({ command, rowCount, rows: this.#rows });
    this.#rowError = undefined;
    this.#shape = undefined;
    this.#rows = [];
    this.#answered += 1;
  }

  handleError(error: Error): void {
    const failed = this.#answered;
    this.#settled[failed]?.reject(error);
    for (const later of this.#settled.slice(failed + 1)) later.reject(new SkippedAfterFailure());
    this.#forgetParses(failed);
    this.#settle(error);
  }

  handleReadyForQuery(): void {
    this.#forgetParses(this.statements.length);
    this.#settle(null);
  }

  /**
   * The names this batch parsed are prepared up to the statement that failed (or all of them);
   * those after it were skipped. The failing one's own Parse may or may not have run: its name is
   * in doubt until a Close clears it.
   */
  #forgetParses(failed: number): void {
    const wire = this.#wire;
    if (!wire) return;
    for (const [index, name] of this.#parsing) {
      delete wire.submittedNamedStatements[name];
      if (index < failed) wire.parsedStatements[name] = this.statements[index]!.text;
      else if (index === failed) namedOn(wire).inDoubt.add(name);
    }
    this.#parsing.clear();
  }

  #settle(error: Error | null): void {
    this.callback?.(error);
  }
}

/**
 * Sends `statements` as one batch on `client`, each settled through its entry of `settled`. A
 * read timeout closes the connection: what was sent may still be answered, and `pg` would leave
 * the connection open.
 */
export function submitBatch(
  client: pg.ClientBase,
  statements: readonly BatchStatement[],
  settled: BatchSettled[],
): void {
  const batch = new PgBatch(statements, settled, client);
  batch.callback = (error) => {
    if (error && isQueryReadTimeout(error)) (client as unknown as { connection: Wire }).connection.stream.destroy();
  };
  void client.query(batch);
}

/** One statement as a batch of its own: a named one is parsed and described once per connection. */
export function queryStatement(client: pg.ClientBase, statement: BatchStatement): Promise<BatchAnswer> {
  return new Promise((resolve, reject) => submitBatch(client, [statement], [{ resolve, reject }]));
}
