import { sql, type Selectable } from 'kysely';
import { PARTICIPANT_STATUSES, type Participant } from '../core/domain.ts';
import { AppError } from '../core/errors.ts';
import type { StoreOperations } from './store.ts';
import type { QueryContext } from './query-context.ts';
import type { ParticipantsTable } from './schema.ts';
import { isUniqueViolation } from './db-errors.ts';
import { fromBool, fromMs, oneOf, toBool, toMs } from './codec.ts';
import { prepared } from './prepared.ts';
import { conversationsOfParticipant, eraseParticipant } from './participant-erasure.ts';

type ParticipantOperations = Pick<
  StoreOperations,
  | 'insertParticipant'
  | 'getParticipant'
  | 'lockParticipant'
  | 'lockActiveParticipant'
  | 'findParticipantByPhone'
  | 'listParticipants'
  | 'countParticipants'
  | 'updateParticipant'
  | 'deleteParticipant'
  | 'conversationsOfParticipant'
>;

const byId = prepared((db, a: { id: string }) => db.selectFrom('participants').selectAll().where('id', '=', a.id));
const byPhone = prepared((db, a: { phoneNumber: string }) =>
  db.selectFrom('participants').selectAll().where('phone_number', '=', a.phoneNumber),
);
// NO KEY UPDATE, like the UPDATE of a status: it serialises with other status writers but not
// with the key-share locks of inserts that reference the participant (a timer, a schedule).
// SQLite's transactions are exclusive already.
const lockById = prepared((db, a: { id: string }, dialect) => {
  const query = db.selectFrom('participants').selectAll().where('id', '=', a.id);
  return dialect === 'postgres' ? query.forNoKeyUpdate() : query;
});

/** The row locked as `lockById` locks it, found only while the participant is active: a fence. */
const lockActive = prepared((db, a: { id: string }, dialect) => {
  const query = db
    .selectFrom('participants')
    .select(sql<number>`1`.as('one'))
    .where('id', '=', a.id)
    .where('status', '=', 'active');
  return dialect === 'postgres' ? query.forNoKeyUpdate() : query;
});

const PHONE_UNIQUE = { constraint: 'participants_phone_number_unique', sqliteColumns: 'participants.phone_number' };

export function participantQueries(ctx: QueryContext): ParticipantOperations {
  const { db } = ctx;
  return {
    async insertParticipant(p) {
      try {
        await db
          .insertInto('participants')
          .values({
            id: p.id,
            phone_number: p.phoneNumber,
            name: p.name,
            gender: p.gender,
            ethnicity: p.ethnicity,
            background: p.background,
            timezone: p.timezone,
            status: p.status,
            cohort: p.cohort,
            debug: toBool(p.debug),
            enrolled_at: toMs(p.enrolledAt),
            created_at: toMs(p.createdAt),
            updated_at: toMs(p.updatedAt),
          })
          .execute();
      } catch (error) {
        if (isUniqueViolation(error, PHONE_UNIQUE)) {
          throw new AppError('participant_exists', `a participant with phone number ${p.phoneNumber} already exists`, {
            fault: 'user',
            field: 'phone_number',
            cause: error,
          });
        }
        throw error;
      }
    },

    async getParticipant(id) {
      const row = await byId.first(ctx, { id });
      return row && toParticipant(row);
    },

    async lockParticipant(id) {
      const row = await lockById.first(ctx, { id });
      return row && toParticipant(row);
    },

    async lockActiveParticipant(id) {
      await lockActive.fenced(ctx, { id }, 'participant');
    },

    async findParticipantByPhone(phoneNumber) {
      const row = await byPhone.first(ctx, { phoneNumber });
      return row && toParticipant(row);
    },

    async listParticipants(filter = {}) {
      let query = db.selectFrom('participants').selectAll().orderBy('enrolled_at').orderBy('ordinal');
      if (filter.status !== undefined) query = query.where('status', '=', filter.status);
      if (filter.cohort !== undefined) query = query.where('cohort', '=', filter.cohort);
      if (filter.limit !== undefined) query = query.limit(filter.limit);
      if (filter.offset !== undefined) {
        // SQLite accepts OFFSET only after a LIMIT; -1 means none.
        if (filter.limit === undefined && ctx.dialect === 'sqlite') query = query.limit(-1);
        query = query.offset(filter.offset);
      }
      return (await query.execute()).map(toParticipant);
    },

    async countParticipants(filter = {}) {
      let query = db.selectFrom('participants').select((eb) => eb.fn.countAll<number>().as('n'));
      if (filter.status !== undefined) query = query.where('status', '=', filter.status);
      if (filter.cohort !== undefined) query = query.where('cohort', '=', filter.cohort);
      return Number((await query.executeTakeFirstOrThrow()).n);
    },

    async updateParticipant(id, patch, now) {
      const row = await db
        .updateTable('participants')
        .set({
          name: patch.name,
          gender: patch.gender,
          ethnicity: patch.ethnicity,
          background: patch.background,
          timezone: patch.timezone,
          status: patch.status,
          cohort: patch.cohort,
          debug: patch.debug === undefined ? undefined : toBool(patch.debug),
          updated_at: toMs(now),
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && toParticipant(row);
    },

    deleteParticipant: (id) => eraseParticipant(ctx, id),

    conversationsOfParticipant: (id) => conversationsOfParticipant(ctx, id),
  };
}

export function toParticipant(row: Selectable<ParticipantsTable>): Participant {
  return {
    id: row.id,
    phoneNumber: row.phone_number,
    name: row.name,
    gender: row.gender,
    ethnicity: row.ethnicity,
    background: row.background,
    timezone: row.timezone,
    status: oneOf(PARTICIPANT_STATUSES, row.status, 'participant status'),
    cohort: row.cohort,
    debug: fromBool(row.debug),
    enrolledAt: fromMs(row.enrolled_at),
    createdAt: fromMs(row.created_at),
    updatedAt: fromMs(row.updated_at),
  };
}
