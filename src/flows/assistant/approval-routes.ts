import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import { AppError } from '../../core/errors.ts';
import { parseRequest } from '../../http/http-errors.ts';
import { jsonSchema } from '../../http/participant-schemas.ts';
import { resource } from '../../http/resource.ts';
import type { Store } from '../../store/store.ts';
import { argumentsAsJson } from '../../tools/execute-tool-call.ts';
import type { RouteHost } from '../flow-module.ts';
import { APPROVAL_TRIGGER } from './approval-turn.ts';
import { decideCall, readApprovals, type ApprovalState, type HeldCall } from './approvals.ts';

const tags = ['assistant'];
const params = z.strictObject({ id: z.string().min(1).max(100) });
const callParams = params.extend({ callId: z.string().min(1).max(200) });
const decisionBody = z.strictObject({ approve: z.boolean() });

/** `POST`/`GET …/approvals`: an operator's (or a UI's) answer to a tool call that waits (decision 022). */
export function approvalRoutes(
  app: FastifyInstance,
  host: RouteHost,
  deps: { store: Store; clock: Clock; flow: string },
) {
  const conversationOf = async (id: string) => {
    const conversation = await host.conversation(id, 'id');
    if (conversation.flow !== deps.flow)
      throw new AppError('not_found', `conversation ${conversation.id} is not an assistant conversation`, {
        field: 'id',
      });
    return conversation;
  };

  resource(app, '/api/conversations/:id/approvals', {
    GET: {
      clientScopes: ['read'],
      schema: { tags, summary: 'Tool calls waiting for a yes, and the last ones decided' },
      handler: async (request) => {
        const { id } = parseRequest(params, request.params, 'params');
        const conversation = await conversationOf(id);
        return { status: 'ok', result: approvalsView(readApprovals(await deps.store.getFlowState(conversation.id))) };
      },
    },
  });

  resource(app, '/api/conversations/:id/approvals/:callId', {
    POST: {
      clientScopes: ['write'],
      schema: {
        tags,
        summary: 'Approve or deny a tool call that waits; the reply resumes once no call of it waits',
        body: jsonSchema(decisionBody),
      },
      handler: async (request, reply) => {
        const { id, callId } = parseRequest(callParams, request.params, 'params');
        const { approve } = parseRequest(decisionBody, request.body, 'body');
        const conversation = await conversationOf(id);
        // Under the conversation's queue and lease: never between a turn's read and its commit.
        const decision = await host.exclusive(conversation.id, () =>
          deps.store.transaction(async (tx) => {
            const decided = decideCall(
              readApprovals(await tx.getFlowState(conversation.id)),
              callId,
              approve,
              deps.clock.now(),
            );
            if (decided.kind === 'decided') await tx.saveFlowState(conversation.id, decided.state, deps.clock.now());
            return decided;
          }),
        );
        if (decision.kind === 'unknown')
          throw new AppError('not_found', `no tool call "${callId}" waits for approval here`, { field: 'callId' });
        if (decision.kind === 'conflict')
          throw new AppError('approval_decided', `tool call "${callId}" was already ${decision.call.status}`, {
            field: 'approve',
          });
        if (decision.kind === 'unchanged') return { status: 'ok', result: callView(decision.call) };
        if (decision.complete) host.trigger(conversation.id, { kind: 'event', trigger: APPROVAL_TRIGGER, hint: '' });
        return reply.status(202).send({
          status: 'ok',
          message: decision.complete ? 'Decided; the reply resumes' : 'Decided; other calls of this reply still wait',
          result: callView(decision.call),
        });
      },
    },
  });
}

export function approvalsView(state: ApprovalState) {
  const requestedAt = state.pause?.requestedAt ?? null;
  return {
    waiting: (state.pause?.calls ?? [])
      .filter((call) => call.status === 'pending')
      .map((call) => ({
        ...callView(call),
        requestedAt,
      })),
    // Newest first; a decided call of a reply not yet resumed is still in its pause.
    decided: [...state.decided, ...(state.pause?.calls ?? []).filter((call) => call.status !== 'pending')]
      .reverse()
      .map(callView),
  };
}

function callView(call: HeldCall) {
  return {
    callId: call.id,
    tool: call.name,
    summary: call.summary,
    arguments: argumentsAsJson(call.arguments),
    status: call.status,
    decidedAt: call.decidedAt,
    decidedBy: call.decidedBy,
  };
}
