import {
  BinaryOperationNode,
  ColumnNode,
  LimitNode,
  OperationNodeTransformer,
  OperatorNode,
  ReferenceNode,
  ValueNode,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/** The statuses partial indexes are defined on (`where status = 'pending'`, decision 020). */
const INDEXED_STATUSES: ReadonlySet<unknown> = new Set(['pending', 'running']);

function columnName(node: OperationNode): string | undefined {
  if (ColumnNode.is(node)) return node.column.name;
  if (ReferenceNode.is(node) && ColumnNode.is(node.column)) return node.column.column.name;
  return undefined;
}

/** Constant limits written as literals; larger ones stay parameters. */
const MAX_LITERAL_LIMIT = 1000;

const isSmallInteger = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_LITERAL_LIMIT;

class PlanLiterals extends OperationNodeTransformer {
  protected override transformLimit(node: LimitNode): LimitNode {
    const transformed = super.transformLimit(node);
    const { limit } = transformed;
    if (ValueNode.is(limit) && !limit.immediate && isSmallInteger(limit.value))
      return LimitNode.create(ValueNode.createImmediate(limit.value));
    return transformed;
  }

  protected override transformBinaryOperation(node: BinaryOperationNode): BinaryOperationNode {
    const transformed = super.transformBinaryOperation(node);
    const { leftOperand, operator, rightOperand } = transformed;
    if (
      columnName(leftOperand) === 'status' &&
      OperatorNode.is(operator) &&
      operator.operator === '=' &&
      ValueNode.is(rightOperand) &&
      !rightOperand.immediate &&
      INDEXED_STATUSES.has(rightOperand.value)
    )
      return BinaryOperationNode.create(leftOperand, operator, ValueNode.createImmediate(rightOperand.value));
    return transformed;
  }
}

/**
 * Writes two kinds of constants into the SQL as literals instead of bound parameters, because
 * query planners do better with them (decision 020):
 * - `status = 'pending'` (and `'running'`): a planner uses a partial index (`… where status =
 *   'pending'`) only when the query's own WHERE names the same literal: SQLite never does for
 *   `status = ?`, and PostgreSQL not with a generic plan of a prepared statement.
 * - a constant `LIMIT` up to 1000 (`.limit(1)`): SQLite ran the sender's read (a join ordered and
 *   limited to one row) in 9 µs with `limit 1` and in 40–53 µs with `limit ?` bound to 1.
 * Only constants the code writes are inlined (a prepared query's arguments are placeholders, never
 * values), so the statement texts stay few and nothing a caller passes becomes SQL text.
 */
export class PlanLiteralsPlugin implements KyselyPlugin {
  readonly #transformer = new PlanLiterals();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.#transformer.transformNode(args.node);
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}
