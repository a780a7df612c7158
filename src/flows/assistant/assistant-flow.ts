import type { Clock, IdGenerator } from '../../core/clock.ts';
import type { Flow, FlowRunContext, PreparedTurn, TurnRequest } from '../../engine/flow.ts';
import type { ExecutedToolCall, ToolLoopResult } from '../../engine/tool-loop.ts';
import type { LlmMessage } from '../../llm/llm-provider.ts';
import type { AnyTool } from '../../tools/define-tool.ts';
import { ASSISTANT_APOLOGY, runAgenticLoop } from './agentic-loop.ts';
import { assistantSystemMessage, contextBlock, recentDialogue } from './assistant-prompts.ts';
import { assistantTools } from './assistant-tools.ts';
import { NotesDraft } from './notes-draft.ts';
import { RECALL_TOOL, type AssistantProfile, type BuiltInToolName, type ProfileSet } from './profiles.ts';
import { planForPause, resumedDialogue } from './approval-turn.ts';
import { closePause, openPause, readApprovals, waiting, type Pause } from './approvals.ts';
import { extractRecallQuery } from './recall.ts';
import { PersonMemory, type SemanticRecall } from './memory.ts';
import { redact } from './redact.ts';
import { routeProfile } from './route-profile.ts';

export const ASSISTANT_FLOW = 'assistant';

/** Tools contributed per request by configured MCP servers (named `server__tool`). */
export interface ExtraToolSource {
  tools(signal: AbortSignal): Promise<AnyTool[]>;
}

export interface AssistantOptions {
  profiles: ProfileSet;
  clock: Clock;
  ids: IdGenerator;
  /** Shown in every context block; "Unknown" when not configured. */
  location: string;
  /** Short-term memory: how far back, and how many messages at most. */
  recentWindowMs: number;
  recentMaxMessages: number;
  /** Model calls per reply (spec 003: 8). */
  maxModelCalls: number;
  /** Recalled messages at most. */
  recallLimit: number;
  /** The lighter model for routing and recall extraction (`LLM_INTERPRETER_MODEL`). */
  helperModel: string | undefined;
  helperTimeoutMs: number;
  /** Recall by meaning too (`LLM_EMBEDDING_MODEL`); undefined = full-text search alone. */
  semantic?: SemanticRecall | undefined;
  mcp?: ExtraToolSource;
}

/**
 * Spec 003's personal assistant on our engine (decision 006): redaction first, a persona picked
 * per request, recent dialogue and recalled history, fresh context on every call, and a
 * guarded agentic loop over the profile's tools and the MCP servers' tools.
 */
export function createAssistantFlow(options: AssistantOptions): Flow {
  return {
    id: ASSISTANT_FLOW,
    initialState: () => ({ state: 'ACTIVE', subState: null }),
    subStates: [],
    needsParticipant: false,
    // Who a web session is for: the person whose notes and conversations it shares (decision 006).
    callerFields: ['phone', 'id'],
    searchesTranscript: true,
    redactInput: (text) => redact(text).text,
    // What a UI needs to show Approve / Deny after a reconnect (decision 022).
    sessionView: async (conversation, { store }) => {
      const waitingCalls = waiting(readApprovals(await store.getFlowState(conversation.id)));
      return { approvals: waitingCalls.map((call) => ({ callId: call.id, summary: call.summary })) };
    },
    greetingHint: () =>
      '[The user has just opened a conversation. Greet them in one or two sentences and say what you can help with.]',
    prepareTurn: (request) => prepareAssistantTurn(request, options),
  };
}

async function prepareAssistantTurn(request: TurnRequest, options: AssistantOptions): Promise<PreparedTurn | null> {
  const { conversation, input, store } = request;
  // Messages were redacted as they arrived (`redactInput`); redacting again is a no-op that keeps
  // a message recorded before this flow was configured from reaching a model raw.
  const requestText = input.kind === 'message' ? redact(input.text).text : input.hint;
  const plan = planForPause(readApprovals(await store.getFlowState(conversation.id)), input, requestText, request.now);
  if (plan.kind === 'nothing') return null;
  /** The approvals as the turn leaves them; null = unchanged, nothing to write. */
  let approvals = plan.kind === 'resume' ? closePause(plan.state) : plan.changed ? plan.state : null;
  // Memory belongs to the person: a participant, or whom the web session was started for.
  const person =
    request.participant?.id ??
    (conversation.participantId === null ? ((await store.getSessionCaller(conversation.id))?.person ?? null) : null);
  const scope = { conversationId: conversation.id, person };
  const notes = new NotesDraft(await store.listNotes(scope), {
    scope,
    ids: options.ids,
    now: () => options.clock.now(),
  });
  const memory = new PersonMemory(store, scope, options.semantic);
  const { profiles } = options;
  let profile =
    plan.kind === 'resume' ? (profiles.byName.get(plan.pause.profile) ?? profiles.fallback) : profiles.fallback;
  const builtIns = assistantTools({
    recall: async (query, text, signal) => (await memory.recall(query, text, options.recallLimit, signal)).messages,
    clock: options.clock,
    notes,
  });
  const toolsOf = async (context: FlowRunContext) => [
    ...profile.tools.map((name) => withApproval(builtIns[name], profile)),
    ...((await options.mcp?.tools(context.signal)) ?? []),
  ];
  const loop = (context: FlowRunContext, system: string, dialogue: LlmMessage[], tools: AnyTool[]) =>
    runAgenticLoop({
      ...context,
      system,
      context: () => contextBlock(options.clock.now(), options.location, request.participant?.timezone ?? null),
      dialogue,
      tools,
      maxModelCalls: options.maxModelCalls,
    });

  const answer = async (context: FlowRunContext) => {
    const audit = auditor(context);
    if (input.kind === 'message') {
      const started = context.elapsed();
      const route = await routeProfile(profiles, requestText, {
        provider: context.provider,
        model: options.helperModel,
        timeoutMs: options.helperTimeoutMs,
        signal: context.signal,
      });
      profile = route.profile;
      audit('route_profile', { answer: route.answer }, `${profile.name} (${route.how})`, context.elapsed() - started);
    }
    const recalled =
      input.kind === 'message' ? await recall(memory, request, options, context, profile, requestText, audit) : [];
    const tools = await toolsOf(context);
    const dialogue: LlmMessage[] = [
      ...recentDialogue(request.history, request.now, options.recentWindowMs, options.recentMaxMessages).map(
        (m): LlmMessage => ({ role: m.role === 'user' ? 'user' : 'assistant', content: m.text }),
      ),
      { role: 'user', content: requestText },
    ];
    const system = assistantSystemMessage(profile, recalled, tools);
    return { system, result: await loop(context, system, dialogue, tools) };
  };

  const resume = async (context: FlowRunContext, pause: Pause, newRequest: string | null) => {
    const tools = await toolsOf(context);
    const resumed = await resumedDialogue(pause, tools, context, newRequest);
    const result = await loop(context, pause.system, resumed.dialogue, tools);
    return { system: pause.system, result: { ...result, toolMs: result.toolMs + resumed.toolMs } };
  };

  const run = async (context: FlowRunContext): Promise<ToolLoopResult> => {
    const { system, result } =
      plan.kind === 'resume' ? await resume(context, plan.pause, plan.newRequest) : await answer(context);
    if (result.pause) {
      const opened = { turnId: request.turnId, requestedAt: request.now.toISOString(), profile: profile.name, system };
      approvals = openPause(
        approvals ?? plan.state,
        { ...opened, dialogue: result.pause.dialogue },
        result.pause.calls,
      );
    }
    return result;
  };

  return {
    get module() {
      return profile.name;
    },
    systemMessages: [],
    tools: [],
    fallbackText: ASSISTANT_APOLOGY,
    codeAllowed: true,
    run,
    finish: () => ({}),
    commit: async (tx) => {
      await notes.commit(tx);
      await memory.commit(tx, request.now);
      if (approvals) await tx.saveFlowState(conversation.id, approvals, request.now);
    },
  };
}

/** A built-in tool as this profile runs it: waiting for the person's yes when the profile says so. */
function withApproval(tool: AnyTool, profile: AssistantProfile): AnyTool {
  return profile.needsApproval.includes(tool.name as BuiltInToolName) ? { ...tool, needsApproval: true } : tool;
}

type Audit = (name: string, args: unknown, result: string, durationMs?: number) => void;

/** Routing, recall and redaction go into the turn's audit (and summary) like tool calls, without narration. */
function auditor(context: FlowRunContext): Audit {
  let count = 0;
  return (name, args, result, durationMs = 0) => {
    const entry: ExecutedToolCall = {
      round: 0,
      call: { id: `${name}_${++count}`, name, arguments: JSON.stringify(args) },
      outcome: { status: 'ok', result },
      startedAt: context.elapsed(),
      durationMs,
    };
    context.onAudit?.(entry);
  };
}

/** Keywords and time bounds from the request, then the person's memory; never fails the turn. */
async function recall(
  memory: PersonMemory,
  request: TurnRequest,
  options: AssistantOptions,
  context: FlowRunContext,
  profile: AssistantProfile,
  text: string,
  audit: Audit,
) {
  if (!profile.tools.includes(RECALL_TOOL)) return [];
  const started = context.elapsed();
  const query = await extractRecallQuery(text, {
    provider: context.provider,
    model: options.helperModel,
    now: request.now,
    signal: context.signal,
    timeoutMs: options.helperTimeoutMs,
  });
  if (!query || query.keywords.length === 0) {
    audit('recall_memory', query ?? { extracted: null }, 'nothing to recall', context.elapsed() - started);
    return [];
  }
  try {
    const found = await memory.recall(query, text, options.recallLimit, context.signal);
    audit(
      'recall_memory',
      query,
      `${found.messages.length} message(s) recalled: ${found.how}`,
      context.elapsed() - started,
    );
    return found.messages;
  } catch (error) {
    context.signal.throwIfAborted();
    audit('recall_memory', query, `search failed: ${(error as Error).message}`, context.elapsed() - started);
    return [];
  }
}
