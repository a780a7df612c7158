import type { Kysely, Migration } from 'kysely';

/**
 * A turn's tool calls in its own row (decision 020): `turns.tool_calls`, a JSON array of the
 * calls in execution order, each with the `tool_calls` table's columns but the turn's and the
 * conversation's ids. A turn that wrote its calls as rows of `tool_calls` wrote three b-trees
 * (the table, its id index and its conversation index) for each, ~7 WAL frames a plain turn.
 * The table stays for calls committed on their own, before their turn's row (the service desk's
 * confirmed changes), and for the calls of turns written before this migration: nothing is moved.
 */
export function turnToolCallsMigration(): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('turns').addColumn('tool_calls', 'text').execute();
    },
  };
}
