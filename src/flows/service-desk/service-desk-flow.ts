import { isDeepStrictEqual } from 'node:util';
import type { Crm } from './crm.ts';
import type { IdGenerator } from '../../core/clock.ts';
import { failpoint } from '../../core/failpoint.ts';
import type { Flow, PreparedTurn, TurnRequest } from '../../engine/flow.ts';
import type { ExecutedToolCall, ToolLoopResult } from '../../engine/tool-loop.ts';
import type { StoreTx } from '../../store/store.ts';
import { dialogSchema, initialDialog, type Dialog } from './dialog.ts';
import { DESK_FALLBACK, runDeskTurn } from './desk-turn.ts';
import type { CommitChange } from './desk-ledger.ts';
import { narratorPrompt } from './desk-prompts.ts';
import { deskView } from './desk-view.ts';
import { deskFormat, type DeskFormat } from './desk-format.ts';
import type { PhoneRegion } from '../../core/phone.ts';
import { localDate } from '../../timers/schedule-math.ts';

export const SERVICE_DESK_FLOW = 'service-desk';

/** What a confirmed change is written through: the CRM and the flow's own records, in one transaction. */
export type DeskTx = { crm: Crm } & Pick<StoreTx, 'saveFlowState' | 'getFlowState' | 'insertToolCalls'>;

export interface ServiceDeskOptions {
  /** Reads (customers, appointments, windows) and escalation tickets. */
  crm: Crm;
  /**
   * Runs `work` in one store transaction whose `crm` writes inside it: a change the caller
   * confirmed commits with the dialog moving past it and its audit entry, or not at all.
   */
  transaction<T>(work: (tx: DeskTx) => Promise<T>): Promise<T>;
  /** Ids of the audit entries written with a change. */
  ids: IdGenerator;
  /** `LLM_INTERPRETER_MODEL`: the decision calls' model, when it differs from the narrator's. */
  interpreterModel: string | undefined;
  /** `DESK_TIME_ZONE`: the business's zone, for "today"; appointments are local dates and times in it. */
  timeZone: string;
  /** `DESK_LOCALE`: the locale amounts, dates and times are told to callers in. */
  locale: string;
  /** National-format phone numbers are read in this region (`DEFAULT_PHONE_REGION`). */
  phoneRegion?: PhoneRegion | undefined;
}

/**
 * Spec 004's customer-service agent on our engine (decision 005): a code-owned dialog, one
 * decision per turn that code gates, tools over the CRM, and a narrator that is the only voice.
 * It needs no participant: a web caller verifies with phone and ZIP.
 */
export function createServiceDeskFlow(options: ServiceDeskOptions): Flow {
  const format = deskFormat(options.locale, options.timeZone);
  return {
    id: SERVICE_DESK_FLOW,
    initialState: () => ({ state: 'CollectingVerification', subState: null }),
    subStates: [],
    needsParticipant: false,
    // A web caller's phone given by the operator or with a message: then only the ZIP is asked.
    callerFields: ['phone'],
    greetingHint: () => '[A caller has just connected. Greet them and ask how you can help.]',
    prepareTurn: (request) => prepareDeskTurn(request, options, format),
    // A UI rebuilds the dialog from this after a reconnect: no secrets, no ids.
    async sessionView(conversation, { store, now }) {
      const dialog = parseDialog(await store.getFlowState(conversation.id));
      const presented = await presentedOptions(options.crm, dialog, localDate(now, options.timeZone));
      return { ...(await deskView(dialog, presented, options.crm, format)) };
    },
  };
}

async function prepareDeskTurn(
  request: TurnRequest,
  options: ServiceDeskOptions,
  format: DeskFormat,
): Promise<PreparedTurn> {
  const { conversation, input, store } = request;
  const dialog = parseDialog(await store.getFlowState(conversation.id));
  const today = localDate(request.now, options.timeZone);
  // `saved` is the dialog as stored (a confirmed change saves it mid-turn); `next` as the turn leaves it.
  let saved = dialog;
  let next = dialog;
  const commitChange: CommitChange = async (work) => {
    const { value, dialog: settled } = await options.transaction(async (tx) => {
      const done = await work(tx.crm);
      await tx.saveFlowState(conversation.id, done.dialog, request.now);
      await tx.insertToolCalls([auditRecord(done.audit, request, options.ids)]);
      return done;
    });
    // Whatever happens to the rest of the turn (barge-in, failure, crash), this is what it leaves.
    saved = next = settled;
    failpoint('desk.after-change');
    return value;
  };
  const run = async (context: Parameters<NonNullable<PreparedTurn['run']>>[0]): Promise<ToolLoopResult> => {
    if (input.kind === 'event') return greet(context, format);
    const presented = await presentedOptions(options.crm, dialog, today);
    const callerPhone =
      request.participant?.phoneNumber ?? (await store.getSessionCaller(conversation.id))?.phone ?? null;
    const turn = await runDeskTurn(context, {
      crm: options.crm,
      dialog,
      conversationId: conversation.id,
      now: request.now,
      callerPhone,
      phoneRegion: options.phoneRegion,
      today,
      format,
      interpreterModel: options.interpreterModel,
      userText: input.text,
      presented,
      commitChange,
    });
    next = turn.dialog;
    return turn.result;
  };
  return {
    module: dialog.state,
    systemMessages: [],
    tools: [],
    fallbackText: DESK_FALLBACK,
    run,
    finish: () => (next.state !== conversation.state ? { conversationPatch: { state: next.state } } : {}),
    commit: async (tx) => {
      // A stored dialog this turn did not write (a change whose commit reported an error yet
      // happened) is the truth about the CRM: the turn's older view must not replace it.
      if (!isDeepStrictEqual(parseDialog(await tx.getFlowState(conversation.id)), saved)) return;
      await tx.saveFlowState(conversation.id, next, request.now);
    },
  };
}

const parseDialog = (stored: unknown): Dialog => {
  const parsed = dialogSchema.safeParse(stored);
  return parsed.success ? parsed.data : initialDialog();
};

function auditRecord(executed: ExecutedToolCall, request: TurnRequest, ids: IdGenerator) {
  const { call, outcome } = executed;
  return {
    id: ids.next('tool'),
    turnId: request.turnId,
    conversationId: request.conversation.id,
    round: executed.round,
    name: call.name,
    arguments: call.arguments,
    result: outcome.result,
    status: outcome.status,
    durationMs: Math.round(executed.durationMs),
    createdAt: request.now,
  };
}

async function greet(
  context: Parameters<NonNullable<PreparedTurn['run']>>[0],
  format: DeskFormat,
): Promise<ToolLoopResult> {
  context.onModelCall?.();
  const started = context.elapsed();
  const facts = {
    userText: '',
    notes: ['A caller has just connected. Greet them and ask how you can help.'],
    appointments: [],
    slots: [],
    selected: { appointment: null, slot: null },
  };
  const response = await context.provider.complete(
    { messages: narratorPrompt(facts, format, []) },
    { signal: context.signal, onTextDelta: context.onTextDelta },
  );
  return {
    text: response.text,
    endedBy: 'reply',
    toolCalls: [],
    modelCalls: 1,
    toolRounds: 0,
    modelMs: context.elapsed() - started,
    toolMs: 0,
    model: response.model,
  };
}

/** The appointments and windows last shown, with their details, so "the second one" can be mapped to an id. */
async function presentedOptions(crm: Crm, dialog: Dialog, today: string) {
  const appointments =
    dialog.customerId && dialog.presentedAppointmentIds.length > 0
      ? (await crm.upcomingAppointments(dialog.customerId, today, 50)).filter((a) =>
          dialog.presentedAppointmentIds.includes(a.id),
        )
      : [];
  const slots =
    dialog.presentedSlotIds.length > 0
      ? (await crm.availableSlots(today, '9999-12-31', 500)).filter((s) => dialog.presentedSlotIds.includes(s.id))
      : [];
  const order = <T extends { id: string }>(items: T[], ids: string[]) =>
    ids.map((id) => items.find((item) => item.id === id)).filter((item): item is T => item !== undefined);
  return {
    appointments: order(appointments, dialog.presentedAppointmentIds),
    slots: order(slots, dialog.presentedSlotIds),
  };
}
