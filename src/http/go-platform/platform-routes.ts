import type { FastifyInstance } from 'fastify';
import type { Participant } from '../../core/domain.ts';
import { AppError } from '../../core/errors.ts';
import { canonicalTimeZone } from '../../core/time-zone.ts';
import { parseRequest } from '../http-errors.ts';
import { jsonSchema } from '../participant-schemas.ts';
import { ok, requirePhone } from '../participant-routes.ts';
import { resource } from '../resource.ts';
import { checkPrompt, composePrompt, customPrompt } from './compose-prompt.ts';
import { checkCustomPrompt } from './custom-generator.ts';
import { goPromptBody, type GoPrompt, type GoSchedule } from './go-schemas.ts';
import { tags, type GoPlatformDeps, type Recipient } from './platform-deps.ts';
import { platformQueries } from './platform-queries.ts';
import { recordRoutes } from './record-routes.ts';
import { goScheduleTimer } from './schedule-timer.ts';
import { timerRoutes } from './timer-routes.ts';

/**
 * The Go PromptPipe's platform routes (issue #23), its paths, bodies and `{status, message,
 * result}` envelopes, over this server's outbox and durable timers. What differs on purpose is
 * in docs/migrating-from-go.md.
 */
export function goPlatformRoutes(app: FastifyInstance, deps: GoPlatformDeps): void {
  const queries = deps.store.extend(platformQueries).ops;
  const recipientOf = (raw: string, field: string) =>
    findRecipient(deps, requirePhone(raw, field, deps.phoneRegion), field);
  sendRoutes(app, deps);
  recordRoutes(app, { ...deps, queries, recipientOf });
  timerRoutes(app, { ...deps, queries });
}

async function findRecipient(deps: GoPlatformDeps, phone: string, field: string): Promise<Recipient> {
  const participant = await deps.store.findParticipantByPhone(phone);
  const conversation = participant && (await deps.store.findConversationByParticipant(participant.id));
  if (!participant || !conversation)
    throw new AppError('participant_not_found', `${field}: no participant is enrolled with ${phone}`, { field });
  return { participant, conversation };
}

function sendRoutes(app: FastifyInstance, deps: GoPlatformDeps): void {
  /** Checked in the Go server's order: the recipient's number, then the prompt; then who they are. */
  const checked = async (body: unknown, options: { schedule: boolean }) => {
    const prompt = parseRequest(goPromptBody, body, 'body');
    const phone = requirePhone(prompt.to, 'to', deps.phoneRegion);
    checkPrompt(prompt, { realModel: deps.realModel, customGenerator: deps.customGenerator !== undefined });
    if (prompt.type === 'custom') await checkCustomPrompt(deps.customGenerator!, customPrompt(prompt, phone));
    // As Go: a request without a schedule gets the default one, when there is one.
    const schedule = prompt.schedule ?? deps.defaultSchedule;
    if (options.schedule && !schedule)
      throw new AppError(
        'invalid_request',
        'schedule: is required (no default is configured: PLATFORM_DEFAULT_SCHEDULE, the Go DEFAULT_SCHEDULE)',
        { field: 'schedule' },
      );
    return { prompt: { ...prompt, schedule }, ...(await findRecipient(deps, phone, 'to')) };
  };

  resource(app, '/send', {
    POST: {
      schema: {
        tags,
        summary:
          'Go PromptPipe: send a prompt now (static, branch, genai, conversation; custom with ' +
          'PLATFORM_CUSTOM_GENERATOR) to an enrolled participant, through the outbox; all but branch and ' +
          "conversation prompts carry the 'Did you do it?' poll",
        body: jsonSchema(goPromptBody),
      },
      handler: async (request) => {
        const { prompt, participant, conversation } = await checked(request.body, { schedule: false });
        await sendNow(deps, prompt, { participant, conversation });
        return ok('Message sent successfully');
      },
    },
  });

  resource(app, '/schedule', {
    POST: {
      schema: {
        tags,
        summary:
          'Go PromptPipe: send a prompt on a schedule ' +
          "(minute, hour, day, month, weekday, timezone; the participant's zone, else UTC), " +
          'on a durable timer; the result is its timer id. Without a schedule, ' +
          'PLATFORM_DEFAULT_SCHEDULE is used when set',
        body: jsonSchema(goPromptBody),
      },
      handler: async (request, reply) => {
        const { prompt, participant, conversation } = await checked(request.body, { schedule: true });
        const id = await schedulePrompt(deps, { ...prompt, schedule: prompt.schedule! }, { participant, conversation });
        return reply.status(201).send(ok('Scheduled successfully', id));
      },
    },
  });
}

/** The prompt's messages appended and queued in the outbox, in the conversation's turn queue. */
async function sendNow(deps: GoPlatformDeps, prompt: GoPrompt, { participant, conversation }: Recipient) {
  if (participant.status !== 'active')
    throw new AppError('participant_inactive', `to: the participant is ${participant.status}; set them active first`, {
      field: 'to',
    });
  const drafts = await composePrompt(prompt, {
    provider: deps.provider,
    source: 'operator',
    custom: {
      generator: deps.customGenerator,
      to: participant.phoneNumber,
      context: { participantId: participant.id, now: deps.clock.now() },
    },
  });
  await deps.engine.exclusive(conversation.id, () =>
    deps.store.transaction(async (tx) => {
      const current = (await tx.getConversation(conversation.id)) ?? conversation; // its channel may have moved
      const context = { now: deps.clock.now(), turnId: null };
      await deps.outgoing.append(tx, { conversation: current, participant }, drafts, context);
    }),
  );
}

async function schedulePrompt(
  deps: GoPlatformDeps,
  { to: _to, schedule, ...content }: GoPrompt & { schedule: GoSchedule },
  recipient: Recipient,
): Promise<string> {
  const now = deps.clock.now();
  const payload = {
    scheduleId: deps.ids.next('sched'),
    createdAt: now.toISOString(),
    zone: scheduleZone(schedule, recipient.participant),
    schedule,
    prompt: content,
  };
  const timer = goScheduleTimer(payload, recipient.conversation.id, now, deps.ids);
  if (!timer)
    throw new AppError('invalid_request', 'schedule: its day and month never fall on a date', { field: 'schedule' });
  await deps.store.scheduleTimer(timer);
  return payload.scheduleId;
}

/** The schedule's own zone (checked by its schema), else the participant's, else UTC (Go's default). */
function scheduleZone(schedule: GoSchedule, participant: Participant): string {
  return (schedule.timezone && canonicalTimeZone(schedule.timezone)) || participant.timezone || 'UTC';
}
