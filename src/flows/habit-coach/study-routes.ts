import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import { PARTICIPANT_STATUSES } from '../../core/domain.ts';
import { AppError } from '../../core/errors.ts';
import { parseRequest } from '../../http/http-errors.ts';
import { jsonSchema, participantParams } from '../../http/participant-schemas.ts';
import { resource } from '../../http/resource.ts';
import type { Store } from '../../store/store.ts';
import { exportPeriod, PERIOD_FORMAT } from './export-period.ts';
import { studyExport } from './study-export.ts';
import { currentStreak, promptOutcomes } from './adherence.ts';
import { RECENT_DAYS, studyOverview } from './study-overview.ts';
import { adherenceCalendar } from './study-series.ts';
import type { StudyQueries } from './study-queries.ts';

const overviewQuery = z.strictObject({
  status: z.enum(PARTICIPANT_STATUSES).optional(),
  cohort: z.string().min(1).max(100).optional(),
});
const periodEnd = (end: string) =>
  z.string().min(1).max(40).optional().describe(`The ${end} of the window (included): ${PERIOD_FORMAT}`);
const exportQuery = overviewQuery.extend({
  deidentify: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  from: periodEnd('start'),
  to: periodEnd('end'),
});

/** The habit coach's study routes: what a coordinator reads to run a study. */
export function studyRoutes(
  app: FastifyInstance,
  deps: {
    clock: Clock;
    store: Store;
    queries: Pick<StudyQueries, 'studyRows' | 'adherenceMessages'>;
    /** The zone whose calendar days the per-day series counts in (`STUDY_TIMEZONE`). */
    timeZone: string;
  },
): void {
  resource(app, '/study/export', {
    GET: {
      schema: {
        tags: ['study'],
        summary:
          'The study as a ZIP of CSV files (participants, messages, prompts, poll_answers, profile_changes, ' +
          'tone, turns, tool_calls, deliveries) and codebook.csv, streamed; ?deidentify=true leaves out phones, ' +
          'names and free text; from and to keep the rows of that window in every file but participants.csv',
        querystring: jsonSchema(exportQuery),
      },
      handler: async (request, reply) => {
        const { from, to, ...query } = parseRequest(exportQuery, request.query, 'query');
        const period = exportPeriod(from, to, deps.timeZone);
        // The name says what is in it: the day it was made, the window's days, de-identified or not.
        const name = [
          `promptpipe-study-${deps.clock.now().toISOString().slice(0, 10)}`,
          ...(from ? [`from-${from.slice(0, 10)}`] : []),
          ...(to ? [`to-${to.slice(0, 10)}`] : []),
          ...(query.deidentify ? ['deidentified'] : []),
        ].join('-');
        return reply
          .type('application/zip')
          .header('content-disposition', `attachment; filename="${name}.zip"`)
          .send(studyExport(deps.store, { ...query, period }));
      },
    },
  });
  resource(app, '/study/overview', {
    GET: {
      schema: {
        tags: ['study'],
        summary:
          'Per participant: prompts sent, done count and rate, response rates, current streak, last reply, ' +
          'recent replies, flags (no_reply_48h, delivery_failing, opted_out, paused, intake_incomplete_24h); ' +
          'study totals; ' +
          'and a per-day series in STUDY_TIMEZONE (prompts sent, replied, done, replies, active participants)',
        querystring: jsonSchema(overviewQuery),
      },
      handler: async (request) => {
        const query = parseRequest(overviewQuery, request.query, 'query');
        const now = deps.clock.now();
        const rows = await deps.queries.studyRows(query, new Date(now.getTime() - RECENT_DAYS * 86_400_000));
        const transcripts = await deps.queries.adherenceMessages(query);
        return { status: 'ok', result: studyOverview({ rows, transcripts, timeZone: deps.timeZone, now }) };
      },
    },
  });
  resource(app, '/study/participants/:id/adherence', {
    GET: {
      schema: {
        tags: ['study'],
        summary:
          "A participant's adherence calendar in their own time zone: one day per date since enrolment " +
          '(done, replied, no_reply, no_prompt, with counts) and their current streak',
        params: jsonSchema(participantParams),
      },
      handler: async (request) => {
        const { id } = parseRequest(participantParams, request.params, 'params');
        return { status: 'ok', result: await participantAdherence(deps, id) };
      },
    },
  });
}

async function participantAdherence(deps: { clock: Clock; store: Store; timeZone: string }, id: string) {
  const participant = await deps.store.getParticipant(id);
  if (!participant) throw new AppError('participant_not_found', `participant ${id} does not exist`, { field: 'id' });
  const conversation = await deps.store.findConversationByParticipant(id);
  const transcript = conversation ? await deps.store.listMessages(conversation.id) : [];
  const outcomes = promptOutcomes(transcript);
  const replies = transcript.filter((message) => message.role === 'user').map((message) => message.createdAt);
  const zone = participant.timezone ?? deps.timeZone;
  const now = deps.clock.now();
  return {
    participant_id: id,
    time_zone: zone,
    current_streak: currentStreak(outcomes, now),
    days: adherenceCalendar({ enrolledAt: participant.enrolledAt, outcomes, replies }, zone, now),
  };
}
