import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseDuration } from '../core/duration.ts';
import { AppError } from '../core/errors.ts';
import { advanceClock, type ClockControlDeps } from '../timers/clock-control.ts';
import type { Clock } from '../core/clock.ts';
import { parseRequest } from './http-errors.ts';
import { jsonSchema } from './participant-schemas.ts';
import { ok } from './participant-routes.ts';
import { resource } from './resource.ts';

/** The farthest one move may take the clock (timers, schedules and dates stay in range). */
const MAX_MOVE_MS = 3660 * 86_400_000;
/** However many moves: dates past this would leave what the store and time zones handle. */
const LATEST_CLOCK_MS = Date.UTC(2200, 0, 1);

const clockBody = z
  .strictObject({
    advance: z
      .string()
      .refine(
        (text) => (parseDuration(text) ?? -1) > 0,
        'must be a positive duration such as "30s", "5m", "1h" or "1d"',
      )
      .refine((text) => (parseDuration(text) ?? 0) <= MAX_MOVE_MS, 'must be at most 3660d (ten years) per move')
      .optional(),
    to: z.iso.datetime({ offset: true }).optional(),
  })
  .refine((body) => (body.advance === undefined) !== (body.to === undefined), 'give exactly one of "advance" or "to"');

export interface AdminRouteDeps {
  clock: Clock;
  /** Present only when CLOCK=virtual. */
  clockControl: ClockControlDeps | undefined;
}

/** Operator routes: reading and (with CLOCK=virtual) moving the clock. */
export function adminRoutes(app: FastifyInstance, deps: AdminRouteDeps): void {
  // Moves of the virtual clock never overlap: each waits for the one before.
  let moving: Promise<unknown> = Promise.resolve();
  resource(app, '/admin/clock', {
    GET: {
      schema: { tags: ['admin'], summary: 'The server clock and its mode' },
      handler: async () =>
        ok(undefined, { now: deps.clock.now().toISOString(), mode: deps.clockControl ? 'virtual' : 'system' }),
    },
    POST: {
      schema: {
        tags: ['admin'],
        summary: 'Move the virtual clock: {"advance":"5h"} or {"to":"<ISO>"}; fires every timer that becomes due',
        body: jsonSchema(clockBody),
      },
      handler: async (request) => {
        const control = deps.clockControl;
        if (!control)
          throw new AppError(
            'clock_not_virtual',
            'the clock can only be moved when the server runs with CLOCK=virtual',
            { field: 'CLOCK' },
          );
        const body = parseRequest(clockBody, request.body, 'body');
        const run = moving.then(() => {
          const now = control.clock.now();
          const target = body.advance ? new Date(now.getTime() + parseDuration(body.advance)!) : new Date(body.to!);
          if (target.getTime() < now.getTime()) {
            throw new AppError(
              'invalid_request',
              `to: ${body.to} is before the clock's now (${now.toISOString()}); the clock never goes back`,
              { field: 'to' },
            );
          }
          if (target.getTime() >= LATEST_CLOCK_MS) {
            throw new AppError(
              'invalid_request',
              `the clock cannot move past ${new Date(LATEST_CLOCK_MS).toISOString()}`,
              { field: body.to ? 'to' : 'advance' },
            );
          }
          if (target.getTime() - now.getTime() > MAX_MOVE_MS) {
            throw new AppError(
              'invalid_request',
              `to: ${body.to} is more than ten years after the clock's now (${now.toISOString()}); move in steps`,
              { field: 'to' },
            );
          }
          return advanceClock(control, target);
        });
        moving = run.catch(() => undefined);
        const result = await run;
        return ok(undefined, { now: result.now.toISOString(), fired: result.fired });
      },
    },
  });
}
