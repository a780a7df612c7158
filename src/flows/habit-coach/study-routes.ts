import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import { PARTICIPANT_STATUSES } from '../../core/domain.ts';
import { parseRequest } from '../../http/http-errors.ts';
import { jsonSchema } from '../../http/participant-schemas.ts';
import { resource } from '../../http/resource.ts';
import type { Store } from '../../store/store.ts';
import { studyExport } from './study-export.ts';
import { RECENT_DAYS, studyOverview } from './study-overview.ts';
import type { StudyRow } from './study-queries.ts';

const overviewQuery = z.strictObject({
  status: z.enum(PARTICIPANT_STATUSES).optional(),
  cohort: z.string().min(1).max(100).optional(),
});
const exportQuery = overviewQuery.extend({
  deidentify: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
});

/** The habit coach's study routes: what a coordinator reads to run a study. */
export function studyRoutes(
  app: FastifyInstance,
  deps: {
    clock: Clock;
    store: Store;
    rows: (filter: { status?: string; cohort?: string }, since: Date) => Promise<StudyRow[]>;
  },
): void {
  resource(app, '/study/export', {
    GET: {
      schema: {
        tags: ['study'],
        summary:
          'The study as a ZIP of CSV files (participants, messages, turns, tool_calls, deliveries) and ' +
          'codebook.csv, streamed; ?deidentify=true leaves out phones, names and free text',
        querystring: jsonSchema(exportQuery),
      },
      handler: async (request, reply) => {
        const query = parseRequest(exportQuery, request.query, 'query');
        const stamp = deps.clock.now().toISOString().slice(0, 10);
        return reply
          .type('application/zip')
          .header(
            'content-disposition',
            `attachment; filename="promptpipe-study-${stamp}${query.deidentify ? '-deidentified' : ''}.zip"`,
          )
          .send(studyExport(deps.store, query));
      },
    },
  });
  resource(app, '/study/overview', {
    GET: {
      schema: {
        tags: ['study'],
        summary:
          'Per participant: prompts sent, done count and rate, last reply, recent replies, flags ' +
          '(no_reply_48h, delivery_failing, paused, intake_incomplete_24h); and study totals',
        querystring: jsonSchema(overviewQuery),
      },
      handler: async (request) => {
        const query = parseRequest(overviewQuery, request.query, 'query');
        const now = deps.clock.now();
        const rows = await deps.rows(query, new Date(now.getTime() - RECENT_DAYS * 86_400_000));
        return { status: 'ok', result: studyOverview(rows, now) };
      },
    },
  });
}
