import pg from 'pg';
import pgUtils from 'pg/lib/utils.js';

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

/** `pg.Result`'s row building, which its published types leave out. */
interface RowBuilder {
  command: string;
  rowCount: number | null;
  rows: Record<string, unknown>[];
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): Record<string, unknown>;
  addRow(row: Record<string, unknown>): void;
  addCommandComplete(message: unknown): void;
}

/**
 * Per connection, the names whose Parse failed with its statement: the server may or may not have
 * prepared them (an error in Bind or Execute leaves the name prepared). The next Parse of such a
 * name is preceded by a Close, which the server accepts for a name it does not know.
 */
const inDoubt = new WeakMap<Wire, Set<string>>();

const rowBuilder = (types: TypeParsers) =>
  new pg.Result(undefined as unknown as string, types as typeof pg.types) as unknown as RowBuilder;

/**
 * Several statements in one message exchange with PostgreSQL (decision 020): each statement's
 * Parse (unless its name is prepared already), Bind, Describe and Execute, then a single Sync.
 * The server answers the whole batch in one flush, where `pg`'s pipeline mode syncs each
 * statement and the server flushes each answer on its own: a read, a wake-up and a parse in this
 * process per statement. Inside a transaction the batch's statements are the transaction's; the
 * first that fails makes the server skip the rest up to the Sync (they reject with
 * `SkippedAfterFailure`), as `pg` would have them fail with "current transaction is aborted".
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
  #wire: Wire | undefined;
  #result: RowBuilder;
  #answered = 0;
  /** A column parser's failure on the current statement's rows: the statement fails, the exchange goes on. */
  #rowError: { error: unknown } | undefined;
  /** Told once the batch ended: null, or the first failure (`pg` wraps it with its read timeout). */
  callback: ((error: Error | null) => void) | undefined;

  constructor(statements: readonly BatchStatement[], settled: BatchSettled[], types: TypeParsers) {
    super({ text: 'batch' });
    this.statements = statements;
    this.#settled = settled;
    this.#types = types;
    this.#result = rowBuilder(types);
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
    if (!name || !(wire.parsedStatements[name] ?? wire.submittedNamedStatements[name])) {
      if (name && inDoubt.get(wire)?.delete(name)) wire.close({ type: 'S', name });
      wire.parse({ text, name });
      if (name) {
        wire.submittedNamedStatements[name] = text;
        this.#parsing.set(index, name);
      }
    }
    wire.bind({ portal: '', statement: name, values, valueMapper: undefined });
    wire.describe({ type: 'P', name: '' });
    wire.execute({ portal: '', rows: 0 });
  }

  handleRowDescription(message: { fields: unknown[] }): void {
    this.#result.addFields(message.fields);
  }

  handleDataRow(message: { fields: unknown[] }): void {
    if (this.#rowError) return;
    try {
      this.#result.addRow(this.#result.parseRow(message.fields));
    } catch (error) {
      // As `pg`'s own query: a value its parser refuses (an int8 beyond 2^53) fails the statement.
      this.#rowError = { error };
    }
  }

  handleCommandComplete(message: unknown): void {
    this.#result.addCommandComplete(message);
    this.#answer();
  }

  handleEmptyQuery(): void {
    this.#answer();
  }

  #answer(): void {
    const { command, rowCount, rows } = this.#result;
    const settled = this.#settled[this.#answered];
    if (this.#rowError) settled?.reject(this.#rowError.error);
    else settled?.resolve({ command, rowCount, rows });
    this.#rowError = undefined;
    this.#answered += 1;
    this.#result = rowBuilder(this.#types);
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
      else if (index === failed) {
        const names = inDoubt.get(wire) ?? new Set<string>();
        inDoubt.set(wire, names.add(name));
      }
    }
    this.#parsing.clear();
  }

  #settle(error: Error | null): void {
    this.callback?.(error);
  }
}
