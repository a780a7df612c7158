import type { LlmToolCall } from '../llm/llm-provider.ts';
import type { ApprovalRequest } from '../engine/flow.ts';
import type { AnnounceEvents, TurnBroadcaster, TurnBroadcast } from '../engine/turn-broadcast.ts';
import { JsonGuard } from '../engine/plain-text.ts';
import { replaceNul } from '../core/nul.ts';
import type { ExecutedToolCall } from '../engine/tool-loop.ts';
import type { EventHub } from './event-hub.ts';
import { argumentsAsJson } from '../tools/execute-tool-call.ts';
import { toolFinishedPhrase, toolStartedPhrase } from './tool-phrases.ts';

export const FIRST_STATUS_AFTER_MS = 400;
export const THINKING_STATUS = 'Thinking…';

/**
 * Turns one model turn into session events: `speaking`, `token`s behind a JSON guard, additive
 * tool `status`es tied to their call, one status if no token came within 400 ms. Emission is
 * fire-and-forget (the hub keeps the order); the latency figures are measured here.
 */
export function createTurnBroadcaster(hub: EventHub, elapsed: () => number = () => performance.now()): TurnBroadcaster {
  return {
    async begin(conversationId, replyMessageId, inboxId) {
      const turnNo = await hub.beginTurn(conversationId, inboxId);
      return new EventBroadcast(hub, conversationId, turnNo, replyMessageId, elapsed);
    },
  };
}

class EventBroadcast implements TurnBroadcast {
  readonly #hub: EventHub;
  readonly #conversationId: string;
  readonly #turnNo: number;
  readonly #messageId: string;
  readonly #elapsed: () => number;
  readonly #started: number;
  readonly #statusTimer: NodeJS.Timeout;
  #guard = new JsonGuard();
  #plainText = true;
  #firstTokenMs: number | null = null;
  #timeToStatusMs: number | null = null;
  #speaking = false;
  #closed = false;

  constructor(hub: EventHub, conversationId: string, turnNo: number, messageId: string, elapsed: () => number) {
    this.#hub = hub;
    this.#conversationId = conversationId;
    this.#turnNo = turnNo;
    this.#messageId = messageId;
    this.#elapsed = elapsed;
    this.#started = elapsed();
    this.#statusTimer = setTimeout(() => this.#status(THINKING_STATUS, null), FIRST_STATUS_AFTER_MS);
    this.#statusTimer.unref();
  }

  modelCallStarted(): void {
    this.#guard = new JsonGuard();
  }

  allowCode(): void {
    this.#plainText = false;
  }

  textDelta(given: string): void {
    if (this.#closed) return;
    const delta = replaceNul(given); // as the stored reply has it (decision 023)
    const text = this.#plainText ? this.#guard.push(delta) : delta;
    if (!text) return;
    if (this.#firstTokenMs === null) {
      this.#firstTokenMs = this.#elapsed() - this.#started;
      clearTimeout(this.#statusTimer);
    }
    if (!this.#speaking) {
      this.#speaking = true;
      void this.#hub.setSpeaking(this.#conversationId, true, this.#turnNo, this.#messageId);
    }
    void this.#hub.emit(this.#conversationId, {
      type: 'token',
      turnId: this.#turnNo,
      messageId: this.#messageId,
      text,
    });
  }

  toolStarted(call: LlmToolCall): void {
    this.#status(toolStartedPhrase(call.name), call.id, { tool: call.name, phase: 'started' });
  }

  toolFinished({ call, outcome, durationMs }: ExecutedToolCall): void {
    const ok = outcome.status === 'ok';
    this.#status(toolFinishedPhrase(ok), call.id, {
      tool: call.name,
      phase: 'finished',
      status: outcome.status,
      durationMs: Math.round(durationMs),
    });
  }

  approvalRequested({ callId, tool, arguments: args, summary }: ApprovalRequest): void {
    if (this.#closed) return;
    void this.#hub.emit(this.#conversationId, {
      type: 'approval_requested',
      role: 'system',
      turnId: this.#turnNo,
      messageId: this.#messageId,
      correlationId: callId,
      text: summary,
      data: { callId, tool, arguments: argumentsAsJson(args), summary },
    });
  }

  metrics() {
    return { firstTokenMs: round(this.#firstTokenMs), timeToStatusMs: round(this.#timeToStatusMs) };
  }

  commit<T>(work: (announce: AnnounceEvents) => Promise<T>, followedElsewhere?: () => boolean | undefined): Promise<T> {
    this.#close();
    return this.#hub.commitTurn(this.#conversationId, this.#turnNo, work, followedElsewhere);
  }

  async committed(turnId: string): Promise<void> {
    this.#close();
    await this.#hub.syncMessages(this.#conversationId, { id: turnId, number: this.#turnNo });
    await this.#hub.setSpeaking(this.#conversationId, false, this.#turnNo, this.#messageId);
    this.#hub.endTurn(this.#conversationId);
  }

  async cancelled(reason: 'interrupted' | 'failed', code = 'internal'): Promise<void> {
    this.#close();
    this.#hub.endTurn(this.#conversationId);
    await this.#hub.setSpeaking(this.#conversationId, false, this.#turnNo, this.#messageId);
    if (reason === 'failed') {
      // The message is kept: the engine runs the turn again, or answers it with an apology.
      await this.#hub.emit(this.#conversationId, {
        type: 'error',
        role: 'system',
        turnId: this.#turnNo,
        messageId: this.#messageId,
        text: 'This reply did not complete; the message is kept.',
        data: { code },
      });
    }
    if (reason === 'interrupted') {
      await this.#hub.emit(this.#conversationId, {
        type: 'status',
        role: 'system',
        turnId: this.#turnNo,
        messageId: this.#messageId,
        text: 'Interrupted',
        data: { phase: 'interrupted' },
      });
    }
  }

  #status(text: string, correlationId: string | null, data?: Record<string, unknown>): void {
    if (this.#closed) return;
    if (this.#timeToStatusMs === null) this.#timeToStatusMs = this.#elapsed() - this.#started;
    void this.#hub.emit(this.#conversationId, {
      type: 'status',
      role: 'system',
      turnId: this.#turnNo,
      messageId: this.#messageId,
      correlationId,
      text,
      ...(data ? { data } : {}),
    });
  }

  #close(): void {
    this.#closed = true;
    clearTimeout(this.#statusTimer);
  }
}

const round = (value: number | null) => (value === null ? null : Math.round(value));
