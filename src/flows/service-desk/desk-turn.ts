import type { Crm, Appointment, Slot } from './crm.ts';
import type { FlowRunContext } from '../../engine/flow.ts';
import { runToolLoop, type ToolLoopResult } from '../../engine/tool-loop.ts';
import { z } from 'zod';
import type { LlmMessage, LlmToolCall } from '../../llm/llm-provider.ts';
import { toolError, toolSpec } from '../../tools/define-tool.ts';
import { plainReply } from '../../engine/plain-text.ts';
import { pendingTask, type Dialog } from './dialog.ts';
import { DESK_TOOLS, type DeskTool } from './desk-tools.ts';
import {
  actionPlanSchema,
  choicesFor,
  CHOICES,
  gate,
  type ActionPlan,
  type ChoiceName,
  type GateDecision,
} from './gate.ts';
import { acknowledgePrompt, decisionPrompt, narratorPrompt, type Facts } from './desk-prompts.ts';
import { Ledger, type CommitChange } from './desk-ledger.ts';
import { TurnState } from './desk-turn-state.ts';
import type { PhoneRegion } from '../../core/phone.ts';
import type { DeskFormat } from './desk-format.ts';

export const DESK_FALLBACK = 'Sorry, I could not finish that just now. Could you say it once more?';
const CLARIFY = 'Ask the caller to clarify what they would like.';
/** Read-only tools a caller may ask about in passing without dropping what is pending. */
const DIGRESSIONS = new Set(['service_policy', 'open_invoices', 'lookup_account', 'list_appointments']);

export interface DeskTurnEnv {
  crm: Crm;
  dialog: Dialog;
  /** The conversation the turn is in: a ticket records it, so a person can read what was said. */
  conversationId: string;
  /** The server's clock at the turn's start (virtual with `CLOCK=virtual`). */
  now: Date;
  /** The caller's phone when the channel told us (WhatsApp, SMS); web callers say it. */
  callerPhone: string | null;
  /** National-format numbers are read in this region (`DEFAULT_PHONE_REGION`). */
  phoneRegion: PhoneRegion | undefined;
  today: string;
  /** How amounts, dates and times are told to the caller (`DESK_LOCALE`, in `DESK_TIME_ZONE`). */
  format: DeskFormat;
  /** The interpreter's model (`LLM_INTERPRETER_MODEL`), when it differs from the narrator's. */
  interpreterModel: string | undefined;
  userText: string;
  /** What is on the table, with the details the interpreter needs to map "the first one" to an id. */
  presented: { appointments: Appointment[]; slots: Slot[] };
  /** Where a confirmed change is carried out, with the dialog past it and its audit entry. */
  commitChange: CommitChange;
}

/**
 * One service-desk turn (decision 005): an acknowledgement streams while the interpreter's one
 * decision call is made and gated and any tool runs; then the narrator tells the outcome, built
 * from tool results. Returns the new dialog with the loop-shaped result the engine records.
 */
export async function runDeskTurn(
  context: FlowRunContext,
  env: DeskTurnEnv,
): Promise<{ result: ToolLoopResult; dialog: Dialog }> {
  const ledger = new Ledger(context);
  const stream = (delta: string) => context.onTextDelta?.(delta);
  // The acknowledgement streams first; the decision and tools run meanwhile, and their narration waits for it.
  const ack = ledger.model(
    () =>
      context.provider.complete(
        { messages: acknowledgePrompt(env, history(context)) },
        { signal: context.signal, onTextDelta: stream },
      ),
    true,
  );
  const work = decideAndAct(context, env, ledger);
  const [acknowledged, outcome] = await Promise.allSettled([ack, work]);
  if (outcome.status === 'rejected') throw outcome.reason;
  // Each call's text is plain text or nothing: JSON-looking output is held back while streaming and dropped here.
  const ackText = acknowledged.status === 'fulfilled' ? plainReply(acknowledged.value.text, '').trim() : '';
  if (ackText) stream(' ');
  let narration: string;
  let told = true;
  try {
    const response = await ledger.model(
      () =>
        context.provider.complete(
          { messages: narratorPrompt(outcome.value.facts, env.format, history(context)) },
          { signal: context.signal, onTextDelta: stream },
        ),
      true,
    );
    narration = plainReply(response.text, DESK_FALLBACK).trim() || DESK_FALLBACK;
  } catch (error) {
    if (context.signal.aborted) throw error;
    narration = DESK_FALLBACK; // the narrator is the only voice; fixed text only when it failed entirely
    told = false;
    stream(narration);
  }
  // A change stays "untold" until a narration that carried it was produced.
  const dialog = told ? { ...outcome.value.dialog, untold: null } : outcome.value.dialog;
  return { result: ledger.result([ackText, narration].filter(Boolean).join(' ')), dialog };
}

const history = (context: FlowRunContext): LlmMessage[] =>
  context.messages.filter((message) => message.role !== 'system').slice(-9);

/**
 * The interpreter's one decision, the gate, and what code does with it: a one-round run of the
 * engine's tool loop. Its `decide` keeps the first proposal only (one decision per turn; the
 * others are never run, nor sent back to the model), its `guardCall` is the gate, and running a
 * call is code acting on the gate's decision. The ledger narrates and audits what is done.
 */
async function decideAndAct(
  context: FlowRunContext,
  env: DeskTurnEnv,
  ledger: Ledger,
): Promise<{ dialog: Dialog; facts: Facts }> {
  const state = new TurnState(env, context.signal, ledger);
  const offered = [
    ...choicesFor(env.dialog).map(choiceSpec),
    ...DESK_TOOLS.filter((tool) => !tool.sideEffect).map((tool) => toolSpec(asSpecTool(tool))),
  ];
  const told = () => state.facts.notes.length + state.facts.appointments.length + state.facts.slots.length;
  const toldBefore = told();
  let decision: GateDecision = { decision: 'answer' };
  let ignored = 0;
  const judge = (plan: ActionPlan) => {
    decision = gate(env.dialog, plan);
    ledger.audit('gate', {
      proposal: plan,
      decision: decision.decision,
      ...(decision.decision === 'refuse' ? { code: decision.code, reason: decision.reason } : {}),
      ...(ignored > 0 ? { ignoredProposals: ignored } : {}),
    });
    return decision;
  };
  // What acting threw (a change whose commit failed) fails the turn: the loop must not make it a result.
  let failure: { error: unknown } | undefined;
  const act = async () => {
    try {
      await actOn(decision, state);
    } catch (error) {
      failure = { error };
    }
    return 'acted';
  };
  const loop = await runToolLoop({
    provider: ledger.observing(context.provider),
    messages: decisionPrompt(env, history(context)),
    tools: offered.map((spec) => ({
      name: spec.name,
      description: spec.description,
      input: z.unknown(),
      execute: act,
    })),
    fallbackText: '',
    signal: context.signal,
    elapsed: context.elapsed,
    hooks: {
      prepareStep: (messages) => ({ messages, tools: offered, model: env.interpreterModel }),
      decide: (response) => {
        ignored = Math.max(0, response.toolCalls.length - 1);
        const [first] = response.toolCalls;
        return first
          ? { kind: 'run-tools', calls: [first], then: { kind: 'reply', text: '' } }
          : { kind: 'reply', text: '' };
      },
      guardCall: (call) => {
        const judged = judge(planOf(call));
        return judged.decision === 'refuse' ? { run: false, outcome: toolError(judged.reason) } : { run: true };
      },
    },
  });
  if (failure) throw failure.error;
  if (loop.toolRounds === 0) judge({ kind: 'answer' });
  const judged = decision as GateDecision;
  if (judged.decision === 'refuse') await state.refused(judged);
  // Nothing came of the turn that the caller could be told (a refused or unusable proposal, a plain answer):
  // the open question is asked again, or they are asked to clarify (never told internals).
  if (told() === toldBefore && !(await state.askAgain()) && judged.decision !== 'answer')
    state.facts.notes.push(CLARIFY);
  return { dialog: state.dialog, facts: state.facts };
}

/** What code does with a proposal the gate let through: a tool, or a choice among what was offered. */
async function actOn(decision: GateDecision, state: TurnState): Promise<void> {
  if (decision.decision === 'choice') return state.choose(decision.choice, decision.input);
  if (decision.decision !== 'run') return;
  const before = state.dialog;
  await state.runTool(decision.tool, decision.input);
  // A question asked in passing (a policy, a bill): answered, then the pending task goes on.
  const { purpose } = decision.input as { purpose?: string };
  const passing = DIGRESSIONS.has(decision.tool.name) && purpose !== 'cancel' && purpose !== 'reschedule';
  if (passing && pendingTask(before) && state.dialog.state === before.state && state.dialog.purpose === before.purpose)
    await state.resume();
}

function planOf(call: LlmToolCall | undefined): ActionPlan {
  if (!call) return { kind: 'answer' };
  let args: unknown;
  try {
    args = JSON.parse(call.arguments || '{}');
  } catch {
    args = { unparsable: call.arguments };
  }
  return actionPlanSchema.parse({ kind: 'tool', name: call.name, arguments: args });
}

function choiceSpec(name: ChoiceName) {
  const descriptions: Record<ChoiceName, string> = {
    note_intent: 'Record what the caller wants before they are verified.',
    confirm: 'The caller answered the pending confirmation: yes or no.',
    select_appointment: 'The caller picked one of the appointments presented (by its id).',
    select_slot: 'The caller picked one of the windows presented (by its id).',
    confirm_address: 'Whether the caller confirmed the address on file for a new visit.',
    decline: 'The caller wants none of the options (no, never mind, forget it): nothing changes.',
    schedule_new_visit:
      'The caller wants a new visit (not moving an existing one), also when something else is pending: that is ' +
      'dropped.',
    clarify_intent:
      'The request could mean two or three different things (say, moving an appointment or cancelling it): name ' +
      'them, and the caller is asked which. Do not guess.',
    pick_intent: 'The caller said which of the things they were asked about they meant.',
    callback_number: 'The phone number the caller gave for our team to call them back on, as they said it.',
    unsupported_request:
      'The caller asks for something none of these tools does (a refund, an emergency or same-day visit, a ' +
      'complaint): it is not done here. Never map it to another request.',
  };
  return toolSpec({ name, description: descriptions[name], input: CHOICES[name], execute: () => '' });
}

const asSpecTool = (tool: DeskTool) => ({
  name: tool.name,
  description: tool.description,
  input: tool.input,
  execute: () => '',
});
