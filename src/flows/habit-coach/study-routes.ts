import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import { PARTICIPANT_STATUSES } from '../../core/domain.ts';
import { parseRequest } from '../../http/http-errors.ts';
import { jsonSchema } from '../../http/participant-schemas.ts';
import { resource } from '../../http/resource.ts';
import { RECENT_DAYS, studyOverview } from './study-overview.ts';
import type { StudyRow } from './study-queries.ts';

const overviewQuery = z.strictObject({ status: z.enum(PARTICIPANT_STATUSES).optional() });

/** The habit coach's study routes: what a coordinator reads to run a study. */
export function studyRoutes(app: FastifyInstance, deps: { clock: Clock; rows: (filter: { status?: string }, since: Date) => Promise<StudyRow[]> }): void {
  resource(app, '/study/overview', {
    GET: {
      schema: { tags: ['study'], summary: 'Per participant: prompts sent, done count and rate, last reply, recent replies, flags (no_reply_48h, delivery_failing, paused, intake_incomplete_24h); and study totals', querystring: jsonSchema(overviewQuery) },
      handler: async (request) => {
        const query = parseRequest(overviewQuery, request.query, 'query');
        const now = deps.clock.now();
        const rows = await deps.rows(query, new Date(now.getTime() - RECENT_DAYS * 86_400_000));
        return { status: 'ok', result: studyOverview(rows, now) };
      },
    },
  });
}
