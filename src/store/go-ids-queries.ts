import { fromMs, toMs } from './codec.ts';
import type { QueryContext } from './query-context.ts';

/** Migration 013: a Go PromptPipe participant id and the participant it became (null once deleted here). */
interface GoParticipantsTable {
  go_id: string;
  participant_id: string | null;
  imported_at: number;
}

export interface GoIdRecord {
  goId: string;
  /** Null when the participant was deleted here after the import. */
  participantId: string | null;
  importedAt: Date;
}

/**
 * The Go id mapping (a store extension): written by the importer in each participant's
 * transaction, read by the importer and the study export.
 */
export function goIdQueries(ctx: QueryContext) {
  const db = ctx.db.withTables<{ go_participants: GoParticipantsTable }>();
  return {
    async recordGoId(record: GoIdRecord): Promise<void> {
      await db
        .insertInto('go_participants')
        .values({
          go_id: record.goId,
          participant_id: record.participantId,
          imported_at: toMs(record.importedAt),
        })
        .execute();
    },

    async findGoId(goId: string): Promise<GoIdRecord | undefined> {
      const row = await db.selectFrom('go_participants').selectAll().where('go_id', '=', goId).executeTakeFirst();
      return row && { goId: row.go_id, participantId: row.participant_id, importedAt: fromMs(row.imported_at) };
    },

    /** The Go id of each of `participantIds` that has one. */
    async goIdsOf(participantIds: readonly string[]): Promise<Map<string, string>> {
      if (participantIds.length === 0) return new Map();
      const rows = await db
        .selectFrom('go_participants')
        .select(['go_id', 'participant_id'])
        .where('participant_id', 'in', [...participantIds])
        .execute();
      return new Map(rows.map((row) => [row.participant_id!, row.go_id]));
    },
  };
}

export type GoIdQueries = ReturnType<typeof goIdQueries>;
