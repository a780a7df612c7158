import {
  BinaryOperationNode,
  ColumnNode,
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

class StatusLiterals extends OperationNodeTransformer {
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
 * Writes `status = 'pending'` (and `'running'`) into the SQL as a literal instead of a bound
 * parameter. A query planner uses a partial index (`… where status = 'pending'`) only when the
 * query's own WHERE names the same literal: SQLite never does for `status = ?`, and PostgreSQL
 * not with a generic plan of a prepared statement. Only these constants are inlined, so the
 * statement texts stay few (and nothing a caller passes becomes SQL text).
 */
export class StatusLiteralsPlugin implements KyselyPlugin {
  readonly #transformer = new StatusLiterals();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.#transformer.transformNode(args.node);
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
}
