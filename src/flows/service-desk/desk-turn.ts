import type { Crm, Appointment, Invoice, Slot } from './crm.ts';
import type { FlowRunContext } from '../../engine/flow.ts';
import type { ToolLoopResult } from '../../engine/tool-loop.ts';
import type { LlmMessage, LlmToolCall } from '../../llm/llm-provider.ts';
import { toolSpec } from '../../tools/define-tool.ts';
import { plainReply } from '../../engine/plain-text.ts';
import {
  pendingAction,
  pendingTask,
  transition,
  verificationLocked,
  type Dialog,
  type DialogEvent,
  type Intent,
} from './dialog.ts';
import { deskTool, DESK_TOOLS, type DeskTool } from './desk-tools.ts';
import {
  actionPlanSchema,
  choicesFor,
  CHOICES,
  gate,
  type ActionPlan,
  type ChoiceName,
  type GateDecision,
} from './gate.ts';
import {
  acknowledgePrompt,
  CONFIRM_QUESTIONS,
  decisionPrompt,
  describeDate,
  describeSlot,
  describeVisit,
  doneNote,
  INTENT_PHRASES,
  narratorPrompt,
  OFFER_PERSON,
  type Done,
  type Facts,
} from './desk-prompts.ts';
import { Ledger, type CommitChange } from './desk-ledger.ts';
import type { PhoneRegion } from '../../core/phone.ts';

export const DESK_FALLBACK = 'Sorry, I could not finish that just now. Could you say it once more?';
const CLARIFY = 'Ask the caller to clarify what they would like.';
const ASK_WHAT = 'Ask what the caller would like to do.';
/** Verification when the caller's phone is known (the channel's, or given for the web session): the ZIP alone. */
const ASK_ZIP =
  'Ask for the 5-digit ZIP code on the account to verify the caller (their phone number is already known), ' +
  'acknowledging what they asked.';
/** After a question asked in passing was answered: the task it interrupted goes on (decision 005, repair). */
const RESUME = 'Having answered that, go back to what was pending, below.';
const NOT_OFFERED = {
  windows:
    'What the caller picked is not one of the windows offered: say so, list the windows below again and ask ' +
    'which one suits them.',
  appointments: (purpose: string) =>
    `What the caller picked is not one of their appointments listed: say so, list them below again and ask which one to ${purpose}.`,
};
/** Read-only tools a caller may ask about in passing without dropping what is pending. */
const DIGRESSIONS = new Set(['service_policy', 'open_invoices', 'lookup_account', 'list_appointments']);
const VERIFY_AGAIN_ZIP =
  'Verification failed. Ask again for the 5-digit ZIP code on the account, or for the phone number on the account ' +
  'if it is not the one they are calling from.';

export interface DeskTurnEnv {
  crm: Crm;
  dialog: Dialog;
  /** The caller's phone when the channel told us (WhatsApp, SMS); web callers say it. */
  callerPhone: string | null;
  /** National-format numbers are read in this region (`DEFAULT_PHONE_REGION`). */
  phoneRegion: PhoneRegion | undefined;
  today: string;
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
          { messages: narratorPrompt(outcome.value.facts, history(context)) },
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

/** The interpreter's one decision, the gate, and what code does with it. */
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
  const response = await ledger.model(() =>
    context.provider.complete(
      {
        messages: decisionPrompt(env, history(context)),
        tools: offered,
        ...(env.interpreterModel ? { model: env.interpreterModel } : {}),
      },
      { signal: context.signal },
    ),
  );
  // One decision per turn: only the first proposal is gated; any others are never run (nor sent back to the model).
  const plan = planOf(response.toolCalls[0]);
  const ignored = response.toolCalls.length - 1;
  const decision = gate(env.dialog, plan);
  ledger.audit('gate', {
    proposal: plan,
    decision: decision.decision,
    ...(decision.decision === 'refuse' ? { code: decision.code, reason: decision.reason } : {}),
    ...(ignored > 0 ? { ignoredProposals: ignored } : {}),
  });

  const told = () => state.facts.notes.length + state.facts.appointments.length + state.facts.slots.length;
  const toldBefore = told();
  if (decision.decision === 'run') {
    const before = state.dialog;
    await state.runTool(decision.tool, decision.input);
    // A question asked in passing (a policy, a bill): answered, then the pending task goes on.
    const { purpose } = decision.input as { purpose?: string };
    const passing = DIGRESSIONS.has(decision.tool.name) && purpose !== 'cancel' && purpose !== 'reschedule';
    if (
      passing &&
      pendingTask(before) &&
      state.dialog.state === before.state &&
      state.dialog.purpose === before.purpose
    )
      await state.resume();
  } else if (decision.decision === 'choice') await state.choose(decision.choice, decision.input);
  else if (decision.decision === 'refuse') await state.refused(decision);
  // Nothing came of the turn that the caller could be told (a refused or unusable proposal, a plain answer):
  // the open question is asked again, or they are asked to clarify (never told internals).
  if (told() === toldBefore && !(await state.askAgain()) && decision.decision !== 'answer')
    state.facts.notes.push(CLARIFY);
  return { dialog: state.dialog, facts: state.facts };
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

/** The dialog as this turn changes it, and the facts the narrator speaks from. */
class TurnState {
  dialog: Dialog;
  readonly facts: Facts;
  readonly #env: DeskTurnEnv;
  readonly #signal: AbortSignal;
  readonly #ledger: Ledger;

  constructor(env: DeskTurnEnv, signal: AbortSignal, ledger: Ledger) {
    this.#env = env;
    this.#signal = signal;
    this.#ledger = ledger;
    this.dialog = env.dialog;
    this.facts = {
      userText: env.userText,
      notes: env.dialog.untold ? [doneNote(env.dialog.untold, true)] : [],
      appointments: [],
      slots: [],
      selected: { appointment: null, slot: null },
    };
  }

  /** Applies an event; a refused one goes to the audit only (the caller hears what the caller of `apply` says instead). */
  apply(event: DialogEvent): boolean {
    const result = transition(this.dialog, event);
    if (result.ok) this.dialog = result.dialog;
    else this.#ledger.audit('transition', { event: event.type, refused: result.reason });
    return result.ok;
  }

  async runTool(tool: DeskTool, input: unknown): Promise<void> {
    // A ticket is a CRM write too: it commits with the dialog it completes, like a confirmed change.
    if (tool.name === 'escalate')
      return void (await this.#change(tool, input, transition(this.dialog, { type: 'escalated' })));
    const context = {
      crm: this.#env.crm,
      customerId: this.dialog.customerId,
      today: this.#env.today,
      callerPhone: this.#env.callerPhone,
      phoneRegion: this.#env.phoneRegion,
    };
    const output = await this.#ledger.tool(tool, input, () => tool.run(input, context));
    if (output === undefined) return;
    await this.#after(tool.name, input as Record<string, unknown>, output as Record<string, unknown>);
  }

  async #after(name: string, input: Record<string, unknown>, output: Record<string, unknown>): Promise<void> {
    switch (name) {
      case 'verify_account': {
        if (input.intent) this.apply({ type: 'intent_stated', intent: input.intent as Intent });
        if (!output.verified) return this.#notVerified(String(output.reason));
        const intent = this.dialog.pendingIntent;
        this.apply({ type: 'verified', customerId: String(output.customerId) });
        this.facts.notes.push(`The caller is verified as ${String(output.customerName)}.`);
        if (intent) await this.#pursue(intent);
        return;
      }
      case 'list_appointments': {
        const appointments = (output.appointments as Appointment[]) ?? [];
        const purpose = input.purpose === 'cancel' || input.purpose === 'reschedule' ? input.purpose : null;
        this.facts.appointments = appointments;
        if (appointments.length === 0) this.facts.notes.push('The caller has no upcoming appointments.');
        // Asked in passing while something is pending: told, and the pending task is kept.
        else if (purpose === null && pendingTask(this.dialog)) return;
        else if (this.apply({ type: 'appointments_presented', ids: appointments.map((a) => a.id), purpose }) && purpose)
          this.facts.notes.push(`Ask which appointment to ${purpose}.`);
        return;
      }
      case 'get_available_slots': {
        if (!choosingWindow(this.dialog)) {
          // Scheduling starts by confirming the address on file, not with slots or the appointment list.
          await this.#pursue('schedule');
          return;
        }
        const slots = (output.slots as Slot[]) ?? [];
        this.facts.slots = slots;
        if (slots.length === 0) this.facts.notes.push('There are no open windows in that range.');
        else if (this.apply({ type: 'slots_presented', ids: slots.map((s) => s.id) }))
          this.facts.notes.push('Ask which window suits the caller.');
        return;
      }
      case 'lookup_account':
        this.facts.notes.push(`The account is ${String(output.name)}, service address ${String(output.address)}.`);
        return;
      case 'open_invoices':
        // Amounts and dates as a person says them; never the invoice's id or its cents.
        return void this.facts.notes.push(invoicesNote((output.invoices as Invoice[]) ?? []));
      case 'service_policy':
        return void this.facts.notes.push(`Our policy: ${String(output.policy)}`);
      default:
        this.facts.notes.push('That was done.');
    }
  }

  /** Acts on a stated intent the proper way (the one path per intent). */
  async #pursue(intent: Intent): Promise<void> {
    const run = (name: string, input: unknown) => this.runTool(deskTool(name)!, deskTool(name)!.input.parse(input));
    if (intent === 'next_appointment' || intent === 'list_appointments')
      return run('list_appointments', { purpose: 'info', limit: intent === 'next_appointment' ? 1 : 3 });
    if (intent === 'cancel' || intent === 'reschedule') return run('list_appointments', { purpose: intent });
    if (intent === 'billing') return run('open_invoices', {});
    if (intent === 'human') return run('escalate', { reason: 'the caller asked for a person' });
    if (intent === 'schedule') {
      if (this.apply({ type: 'schedule_requested' })) await this.#askAddress();
      return;
    }
    this.facts.notes.push(ASK_WHAT);
  }

  /**
   * A failed verification: the same words whether the phone is unknown or the ZIP wrong (which
   * phones are customers is not told); the last allowed attempt offers a person instead.
   */
  #notVerified(reason: string): void {
    // No usable phone (none given, or not a number): no guess was made, so it does not count.
    if (reason === 'no_phone')
      return void this.facts.notes.push(
        'Ask for the phone number on the account, with the ZIP code: no valid phone number was given.',
      );
    this.apply({ type: 'verification_failed' });
    if (this.dialog.state === 'PendingEscalationConfirmation') this.facts.notes.push(OFFER_PERSON.verification_failed);
    else if (this.#env.callerPhone) this.facts.notes.push(VERIFY_AGAIN_ZIP);
    else this.facts.notes.push('Verification failed. Ask again for the phone number and ZIP code on the account.');
  }

  /** Asks the caller to verify (only for the ZIP when their phone is known), or once they have used up their attempts, offers a person. */
  #askToVerify(): void {
    if (!verificationLocked(this.dialog))
      return void this.facts.notes.push(
        this.#env.callerPhone
          ? ASK_ZIP
          : 'Ask for the phone number and ZIP code on the account to verify the caller, acknowledging what they asked.',
      );
    if (this.apply({ type: 'escalation_offered', reason: 'verification_failed' }))
      this.facts.notes.push(OFFER_PERSON.verification_failed);
  }

  async #askAddress(): Promise<void> {
    const customer = this.dialog.customerId ? await this.#env.crm.getCustomer(this.dialog.customerId) : undefined;
    this.facts.notes.push(
      `Before looking for windows, ask the caller to confirm the visit is at the address on file: ${customer?.address ?? 'unknown'}.`,
    );
  }

  /** Asks the question the dialog's state waits on, naming what it is about. False when it waits on none. */
  async askAgain(): Promise<boolean> {
    const { state, purpose } = this.dialog;
    const { presented } = this.#env;
    if (CONFIRM_QUESTIONS[state]) this.#confirmQuestion();
    else if (state === 'DisambiguatingIntent') this.#askWhich();
    else if (state === 'CollectingVerification' && this.dialog.pendingIntent) this.#askToVerify();
    else if (state === 'PendingEscalationConfirmation')
      this.facts.notes.push(OFFER_PERSON[this.dialog.escalationReason ?? 'address_change']);
    else if (state === 'PendingScheduleDetails') await this.#askAddress();
    else if (state === 'PresentingAppointments' && purpose && presented.appointments.length > 0) {
      this.facts.appointments = presented.appointments;
      this.facts.notes.push(`Ask which appointment to ${purpose}.`);
    } else if (state === 'PresentingSlots' && presented.slots.length > 0) {
      this.facts.slots = presented.slots;
      this.facts.selected.appointment =
        presented.appointments.find((a) => a.id === this.dialog.selectedAppointmentId) ?? null;
      this.facts.notes.push('Ask which window suits the caller.');
    } else return false;
    return true;
  }

  /** Back to what was pending after a question asked in passing. */
  async resume(): Promise<void> {
    this.facts.notes.push(RESUME);
    if (!(await this.askAgain())) this.facts.notes.pop();
  }

  /** The clarification of an unclear request, naming what it could be. */
  #askWhich(): void {
    const options = this.dialog.candidates.map((intent) => INTENT_PHRASES[intent]);
    const listed = options.length > 1 ? `${options.slice(0, -1).join(', ')} or ${options.at(-1)}` : options.join('');
    this.facts.notes.push(`The request is unclear. Ask whether the caller wants to ${listed}.`);
  }

  /**
   * A pick that was not among the options: the options are listed again and asked for; from a
   * confirmation the dialog goes back to choosing, so a yes cannot confirm the earlier pick.
   */
  #relist(kind: 'appointments' | 'windows'): void {
    const { presented } = this.#env;
    const { purpose } = this.dialog;
    if (kind === 'windows') {
      if (presented.slots.length === 0) return;
      if (this.dialog.state !== 'PresentingSlots')
        this.apply({ type: 'slots_presented', ids: presented.slots.map((slot) => slot.id) });
      this.facts.slots = presented.slots;
      return void this.facts.notes.push(NOT_OFFERED.windows);
    }
    if ((purpose !== 'cancel' && purpose !== 'reschedule') || presented.appointments.length === 0)
      return void this.facts.notes.push(ASK_WHAT);
    if (this.dialog.state !== 'PresentingAppointments')
      this.apply({ type: 'appointments_presented', ids: presented.appointments.map((a) => a.id), purpose });
    this.facts.appointments = presented.appointments;
    this.facts.notes.push(NOT_OFFERED.appointments(purpose));
  }

  /** The confirmation question of the state, with the appointment and window it is about. */
  #confirmQuestion(): void {
    const { presented } = this.#env;
    this.facts.selected = {
      appointment: presented.appointments.find((a) => a.id === this.dialog.selectedAppointmentId) ?? null,
      slot: presented.slots.find((s) => s.id === this.dialog.selectedSlotId) ?? null,
    };
    this.facts.notes.push(CONFIRM_QUESTIONS[this.dialog.state]!);
  }

  async choose(choice: ChoiceName, input: Record<string, unknown>): Promise<void> {
    switch (choice) {
      case 'note_intent':
        this.apply({ type: 'intent_stated', intent: input.intent as Intent });
        return this.#askToVerify();
      case 'confirm':
        return input.answer === 'yes' ? this.#confirmed() : this.#declined();
      case 'select_appointment': {
        const choosing = this.dialog.state === 'PresentingAppointments';
        // Listed for information only, there is nothing to pick them for yet; else what was offered is listed again.
        if (!this.apply({ type: 'appointment_selected', id: String(input.appointmentId) }))
          return this.#relist('appointments');
        if (CONFIRM_QUESTIONS[this.dialog.state]) return this.#confirmQuestion();
        // A correction while choosing a window: the windows stand, for the other appointment.
        if (!choosing) return void (await this.askAgain());
        return this.runTool(deskTool('get_available_slots')!, { daysAhead: 14, limit: 5 });
      }
      case 'select_slot':
        if (!this.apply({ type: 'slot_selected', id: String(input.slotId) })) return this.#relist('windows');
        return this.#confirmQuestion();
      case 'clarify_intent':
        if (this.apply({ type: 'intent_unclear', candidates: input.candidates as Intent[] })) this.#askWhich();
        return;
      case 'pick_intent': {
        const intent = input.intent as Intent;
        if (!this.apply({ type: 'intent_picked', intent })) return;
        if (this.dialog.customerId === null) return this.#askToVerify();
        // The task the clarification interrupted, named again, goes on where it was.
        if (this.dialog.state !== 'VerifiedIdle') return void (await this.askAgain());
        return this.#pursue(intent);
      }
      case 'confirm_address':
        // Never a booking at an address the caller said is wrong: a person can change it.
        if (input.confirmed !== true) {
          if (this.apply({ type: 'escalation_offered', reason: 'address_change' }))
            this.facts.notes.push(OFFER_PERSON.address_change);
          return;
        }
        this.apply({ type: 'address_confirmed' });
        return this.runTool(deskTool('get_available_slots')!, { daysAhead: 14, limit: 5 });
      case 'schedule_new_visit':
        return this.#pursue('schedule');
      case 'decline':
        return this.#decline();
    }
  }

  /**
   * The one place a side effect runs: from a confirmation state, on a yes, with the dialog's ids.
   * The change, the dialog moving past it and its audit entry commit together (`commitChange`).
   */
  async #confirmed(): Promise<void> {
    const action = pendingAction(this.dialog);
    if (!action) return void this.facts.notes.push(ASK_WHAT);
    // A caller who barged in before the change started may be saying "wait": it does not start.
    this.#signal.throwIfAborted();
    const { tool: name, ...ids } = action;
    const tool = deskTool(name)!;
    if (await this.#change(tool, tool.input.parse(ids), transition(this.dialog, { type: 'confirmed' }))) return;
    this.apply({ type: 'declined' });
    this.facts.notes.push('That could not be done; nothing was changed.');
  }

  /**
   * Runs a CRM write and moves the dialog to `finished` in one transaction (`commitChange`), the
   * outcome kept as untold until a reply carried it. False when the CRM refused (nothing changed).
   */
  async #change(tool: DeskTool, input: unknown, finished: ReturnType<typeof transition>): Promise<boolean> {
    if (!finished.ok) {
      // Nothing waits for this change: nothing runs, and there is no refusal to report.
      this.facts.notes.push(ASK_WHAT);
      return true;
    }
    const settled = await this.#ledger.change(tool, input, this.#env.commitChange, async (crm) => {
      const output = await tool.run(input, { crm, customerId: this.dialog.customerId, today: this.#env.today });
      return {
        output,
        dialog: {
          ...finished.dialog,
          untold: this.#done(tool.name, output as { appointment?: Appointment; ticketId?: string }),
        },
      };
    });
    if (!settled) return false;
    this.dialog = settled.dialog;
    this.facts.notes.push(doneNote(settled.dialog.untold!));
    return true;
  }

  /** "Cancel that", "never mind", "neither": what is pending is dropped, or a clarification goes back to the task it interrupted. */
  async #decline(): Promise<void> {
    const before = this.dialog;
    if (CONFIRM_QUESTIONS[before.state] || before.state === 'PendingEscalationConfirmation') return this.#declined();
    if (!this.apply({ type: 'declined' })) return;
    if (before.state === 'DisambiguatingIntent') {
      if (before.resume && (await this.askAgain())) return;
      return void this.facts.notes.push(ASK_WHAT);
    }
    this.facts.notes.push(
      before.state === 'CollectingVerification'
        ? 'The caller dropped their request; nothing was done. Ask if there is anything else.'
        : 'Nothing was changed, as the caller said no.',
    );
  }

  #declined(): void {
    const person = this.dialog.state === 'PendingEscalationConfirmation';
    if (!this.apply({ type: 'declined' })) return;
    this.facts.notes.push(
      person
        ? 'The caller does not want a person now; ask if there is anything else.'
        : 'Nothing was changed, as the caller said no.',
    );
  }

  /** How a change carried out is told: what it was and when, in the caller's terms. */
  #done(name: string, output: { appointment?: Appointment; ticketId?: string }): Done {
    if (name === 'escalate') return { change: 'escalated', what: String(output.ticketId) };
    const appointment = output.appointment!;
    if (name === 'cancel_appointment') return { change: 'cancelled', what: describeVisit(appointment) };
    if (name === 'create_appointment')
      return { change: 'booked', what: `${describeVisit(appointment)} at ${appointment.address}` };
    const before = this.#env.presented.appointments.find((a) => a.id === appointment.id);
    return {
      change: 'moved',
      what: `${before ? describeVisit(before) : appointment.service} to ${describeSlot(appointment)}`,
    };
  }

  /**
   * A refused proposal: the reason is in the gate's audit entry; the caller is taken down the
   * proper path, or asked again for what was missing or malformed. Anything else (a choice not
   * open now, no such tool) adds nothing: the open question is asked again, or the caller asked to clarify.
   */
  async refused(decision: Extract<GateDecision, { decision: 'refuse' }>): Promise<void> {
    const { code, intent } = decision;
    if (code === 'not_verified') {
      if (intent) this.apply({ type: 'intent_stated', intent });
      return this.#askToVerify();
    }
    if (code === 'verification_locked') return this.#askToVerify();
    if (code === 'needs_confirmation' && intent) return this.#pursue(intent);
    if (code === 'invalid_arguments' && decision.invalid) this.#reask(decision.invalid);
  }

  /** A specific re-ask for what the caller gave that cannot be used (a ZIP code that is not 5 digits). */
  #reask(invalid: NonNullable<Extract<GateDecision, { decision: 'refuse' }>['invalid']>): void {
    const field = (path: string) => invalid.fields.find((f) => f.path === path);
    if (invalid.name === 'verify_account' && this.dialog.customerId === null) {
      if (verificationLocked(this.dialog)) return this.#askToVerify();
      const zip = field('zip');
      if (zip)
        return void this.facts.notes.push(
          zip.missing
            ? 'Ask for the 5-digit ZIP code on the account, which is needed with the phone number.'
            : 'The ZIP code the caller gave is not 5 digits: say that a ZIP code has 5 digits and ask for it again.',
        );
      if (field('phone'))
        return void this.facts.notes.push('Ask for the phone number on the account again, with its area code.');
    }
    if (invalid.name === 'select_slot') return this.#relist('windows');
    if (invalid.name === 'select_appointment') return this.#relist('appointments');
  }
}

/** "1 open invoice: $129.00 due Wednesday, June 10." */
function invoicesNote(invoices: Invoice[]): string {
  if (invoices.length === 0) return 'The caller has no open invoices.';
  const each = invoices.map(
    (invoice) =>
      `${new Intl.NumberFormat('en-US', { style: 'currency', currency: invoice.currency }).format(invoice.amountCents / 100)} due ${describeDate(invoice.dueDate)}`,
  );
  return `The caller has ${invoices.length} open invoice${invoices.length > 1 ? 's' : ''}: ${each.join('; ')}.`;
}

function choosingWindow(dialog: Dialog): boolean {
  const { state } = dialog;
  if (state === 'PresentingAppointments') return dialog.selectedAppointmentId !== null;
  return (
    state === 'PendingScheduleDetails' ||
    state === 'PresentingSlots' ||
    state === 'PendingRescheduleConfirmation' ||
    state === 'PendingScheduleConfirmation'
  );
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
  };
  return toolSpec({ name, description: descriptions[name], input: CHOICES[name], execute: () => '' });
}

const asSpecTool = (tool: DeskTool) => ({
  name: tool.name,
  description: tool.description,
  input: tool.input,
  execute: () => '',
});
