import type { Clock, IdGenerator } from '../../core/clock.ts';
import type { Flow, FlowRunContext, PreparedTurn, TurnRequest } from '../../engine/flow.ts';
import type { ExecutedToolCall, ToolLoopResult } from '../../engine/tool-loop.ts';
import type { LlmMessage } from '../../llm/llm-provider.ts';
import type { AnyTool } from '../../tools/define-tool.ts';
import { ASSISTANT_APOLOGY, runAgenticLoop } from './agentic-loop.ts';
import { assistantSystemMessage, contextBlock, recentDialogue } from './assistant-prompts.ts';
import { assistantTools } from './assistant-tools.ts';
import { NotesDraft } from './notes-draft.ts';
import { RECALL_TOOL, type AssistantProfile, type ProfileSet } from './profiles.ts';
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
    greetingHint: () =>
      '[The user has just opened a conversation. Greet them in one or two sentences and say what you can help with.]',
    prepareTurn: (request) => prepareAssistantTurn(request, options),
  };
}

async function prepareAssistantTurn(request: TurnRequest, options: AssistantOptions): Promise<PreparedTurn> {
  const { conversation, input, store } = request;
  // Messages were redacted as they arrived (`redactInput`); redacting again is a no-op that keeps
  // a message recorded before this flow was configured from reaching a model raw.
  const requestText = input.kind === 'message' ? redact(input.text).text : input.hint;
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
  let profile = options.profiles.fallback;

  const run = async (context: FlowRunContext): Promise<ToolLoopResult> => {
    const audit = auditor(context);
    if (input.kind === 'message') {
      const started = context.elapsed();
      const route = await routeProfile(options.profiles, requestText, {
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
    const builtIns = assistantTools({
      recall: async (query, text, signal) =>
        (await memory.recall(query, text, options.recallLimit, AbortSignal.any([context.signal, signal]))).messages,
      clock: options.clock,
      notes,
    });
    const tools = [
      ...profile.tools.map((name) => builtIns[name]),
      ...((await options.mcp?.tools(context.signal)) ?? []),
    ];
    const dialogue: LlmMessage[] = [
      ...recentDialogue(request.history, request.now, options.recentWindowMs, options.recentMaxMessages).map(
        (m): LlmMessage => ({ role: m.role === 'user' ? 'user' : 'assistant', content: m.text }),
      ),
      { role: 'user', content: requestText },
    ];
    return runAgenticLoop({
      ...context,
      system: assistantSystemMessage(profile, recalled, tools),
      context: () => contextBlock(options.clock.now(), options.location, request.participant?.timezone ?? null),
      dialogue,
      tools,
      maxModelCalls: options.maxModelCalls,
    });
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
    },
  };
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
