import type { Appointment, CrmError, Invoice, Slot } from './crm.ts';
import { pendingAction, pendingTask, transition, type Dialog, type Intent } from './dialog.ts';
import { deskTool, type DeskTool } from './desk-tools.ts';
import type { ChoiceName, GateDecision } from './gate.ts';
import {
  ASK_CALLBACK,
  CONFIRM_QUESTIONS,
  describeSlot,
  describeVisit,
  doneNote,
  NOT_A_PHONE,
  REFUSED_CHANGE,
  UNSUPPORTED,
  type Done,
} from './desk-prompts.ts';
import { canonicalPhone } from '../../core/phone.ts';
import { spokenDigits } from '../../core/spoken-digits.ts';
import type { Ledger } from './desk-ledger.ts';
import type { DeskTurnEnv } from './desk-turn.ts';
import type { DeskFormat } from './desk-format.ts';
import { ASK_WHAT, AskingTurn } from './desk-asking.ts';

/** The dialog as this turn changes it, and the facts the narrator speaks from: what the turn does. */
export class TurnState extends AskingTurn {
  readonly #signal: AbortSignal;

  constructor(env: DeskTurnEnv, signal: AbortSignal, ledger: Ledger) {
    super(env, ledger);
    this.#signal = signal;
  }

  async runTool(tool: DeskTool, input: unknown): Promise<void> {
    if (tool.name === 'escalate') return this.#escalate((input as { reason: string }).reason, null);
    const context = {
      crm: this.env.crm,
      customerId: this.dialog.customerId,
      today: this.env.today,
      callerPhone: this.env.callerPhone,
      phoneRegion: this.env.phoneRegion,
    };
    const output = await this.ledger.tool(tool, input, () => tool.run(input, context));
    if (output === undefined) return;
    await this.#after(tool.name, input as Record<string, unknown>, output as Record<string, unknown>);
  }

  async #after(name: string, input: Record<string, unknown>, output: Record<string, unknown>): Promise<void> {
    switch (name) {
      case 'verify_account': {
        if (input.intent) this.apply({ type: 'intent_stated', intent: input.intent as Intent });
        if (!output.verified) return this.notVerified(String(output.reason));
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
        return void this.facts.notes.push(invoicesNote((output.invoices as Invoice[]) ?? [], this.env.format));
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
      if (this.apply({ type: 'schedule_requested' })) await this.askAddress();
      return;
    }
    this.facts.notes.push(ASK_WHAT);
  }

  async choose(choice: ChoiceName, input: Record<string, unknown>): Promise<void> {
    switch (choice) {
      case 'note_intent':
        this.apply({ type: 'intent_stated', intent: input.intent as Intent });
        return this.askToVerify();
      case 'confirm':
        return input.answer === 'yes' ? this.#confirmed() : this.#declined();
      case 'select_appointment': {
        const choosing = this.dialog.state === 'PresentingAppointments';
        // Listed for information only, there is nothing to pick them for yet; else what was offered is listed again.
        if (!this.apply({ type: 'appointment_selected', id: String(input.appointmentId) }))
          return this.relist('appointments');
        if (CONFIRM_QUESTIONS[this.dialog.state]) return this.confirmQuestion();
        // A correction while choosing a window: the windows stand, for the other appointment.
        if (!choosing) return void (await this.askAgain());
        return this.runTool(deskTool('get_available_slots')!, { daysAhead: 14, limit: 5 });
      }
      case 'select_slot':
        if (!this.apply({ type: 'slot_selected', id: String(input.slotId) })) return this.relist('windows');
        return this.confirmQuestion();
      case 'clarify_intent':
        if (this.apply({ type: 'intent_unclear', candidates: input.candidates as Intent[] })) this.askWhich();
        return;
      case 'pick_intent': {
        const intent = input.intent as Intent;
        if (!this.apply({ type: 'intent_picked', intent })) return;
        if (this.dialog.customerId === null) return this.askToVerify();
        // The task the clarification interrupted, named again, goes on where it was.
        if (this.dialog.state !== 'VerifiedIdle') return void (await this.askAgain());
        return this.#pursue(intent);
      }
      case 'confirm_address':
        // Never a booking at an address the caller said is wrong: a person can change it.
        if (input.confirmed !== true) {
          if (this.apply({ type: 'escalation_offered', reason: 'address_change' })) this.offerPerson('address_change');
          return;
        }
        this.apply({ type: 'address_confirmed' });
        return this.runTool(deskTool('get_available_slots')!, { daysAhead: 14, limit: 5 });
      case 'schedule_new_visit':
        return this.#pursue('schedule');
      case 'decline':
        return this.#decline();
      case 'callback_number': {
        const phone = canonicalPhone(spokenDigits(String(input.phone)), this.env.phoneRegion);
        if (!phone) return void this.facts.notes.push(NOT_A_PHONE);
        const action = pendingAction(this.dialog);
        return this.#escalate(action?.tool === 'escalate' ? action.reason : 'the caller asked for a person', phone);
      }
      case 'unsupported_request':
        // Said so plainly, then the open question again (or what the desk can do instead).
        this.facts.notes.push(UNSUPPORTED);
        if (!(await this.askAgain())) this.facts.notes.push(ASK_WHAT);
        return;
    }
  }

  /**
   * A ticket for a person to call the caller back, opened only with a number to call (the one the
   * caller just gave, else the channel's, the session's or the verified account's); without one the
   * caller is asked for it, and nothing is promised. A ticket is a CRM write too: it commits with the
   * dialog it completes, like a confirmed change.
   */
  async #escalate(reason: string, given: string | null): Promise<void> {
    const phone = given ?? (await this.#knownPhone());
    if (!phone) {
      if (this.dialog.state !== 'PendingEscalationConfirmation')
        this.apply({ type: 'escalation_offered', reason: 'requested' });
      return void this.facts.notes.push(ASK_CALLBACK);
    }
    // As any change: none starts after a barge-in.
    this.#signal.throwIfAborted();
    const tool = deskTool('escalate')!;
    await this.#change(tool, tool.input.parse({ reason }), transition(this.dialog, { type: 'escalated' }), phone);
  }

  async #knownPhone(): Promise<string | null> {
    if (this.env.callerPhone) return this.env.callerPhone;
    const { customerId } = this.dialog;
    return customerId ? ((await this.env.crm.getCustomer(customerId))?.phone ?? null) : null;
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
    if (action.tool === 'escalate') return this.#escalate(action.reason, null);
    const { tool: name, ...ids } = action;
    const tool = deskTool(name)!;
    const outcome = await this.#change(tool, tool.input.parse(ids), transition(this.dialog, { type: 'confirmed' }));
    if (outcome.status === 'refused') await this.#refusedChange(outcome.code);
  }

  /**
   * The CRM refused a confirmed change (another conversation took the window or changed the
   * appointment first): the caller is told that nothing changed, and a window that went is
   * replaced by the windows still open to choose from.
   */
  async #refusedChange(code: CrmError['code']): Promise<void> {
    const { state } = this.dialog;
    const window = state === 'PendingScheduleConfirmation' || state === 'PendingRescheduleConfirmation';
    if (window && (code === 'not_available' || code === 'overlaps')) {
      this.facts.notes.push(code === 'overlaps' ? REFUSED_CHANGE.overlaps : REFUSED_CHANGE.taken);
      await this.runTool(deskTool('get_available_slots')!, { daysAhead: 14, limit: 5 });
      if (this.dialog.state === 'PresentingSlots') return;
    } else this.facts.notes.push(code === 'not_scheduled' ? REFUSED_CHANGE.notScheduled : REFUSED_CHANGE.other);
    this.apply({ type: 'declined' });
    this.facts.notes.push(ASK_WHAT);
  }

  /**
   * Runs a CRM write and moves the dialog to `finished` in one transaction (`commitChange`), the
   * outcome kept as untold until a reply carried it. `refused` when the CRM refused (nothing
   * changed). A ticket's `phone` is the number a person calls back.
   */
  async #change(
    tool: DeskTool,
    input: unknown,
    finished: ReturnType<typeof transition>,
    phone?: string,
  ): Promise<{ status: 'done' } | { status: 'refused'; code: CrmError['code'] }> {
    if (!finished.ok) {
      // Nothing waits for this change: nothing runs, and there is no refusal to report.
      this.facts.notes.push(ASK_WHAT);
      return { status: 'done' };
    }
    const { conversationId, now } = this.env;
    const settled = await this.ledger.change(tool, input, this.env.commitChange, async (crm) => {
      const output = await tool.run(input, {
        crm,
        customerId: this.dialog.customerId,
        today: this.env.today,
        ...(phone ? { ticket: { conversationId, phone, now } } : {}),
      });
      return {
        output,
        dialog: {
          ...finished.dialog,
          untold: this.#done(tool.name, output as { appointment?: Appointment; ticketId?: string }),
        },
      };
    });
    if (settled.status === 'refused') return settled;
    this.dialog = settled.dialog;
    this.facts.notes.push(doneNote(settled.dialog.untold!));
    return { status: 'done' };
  }

  /**
   * "Cancel that", "never mind", "neither": what is pending is dropped, or a clarification goes
   * back to the task it interrupted.
   */
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
    const { format } = this.env;
    const appointment = output.appointment!;
    if (name === 'cancel_appointment') return { change: 'cancelled', what: describeVisit(appointment, format) };
    if (name === 'create_appointment')
      return { change: 'booked', what: `${describeVisit(appointment, format)} at ${appointment.address}` };
    const before = this.env.presented.appointments.find((a) => a.id === appointment.id);
    const visit = before ? describeVisit(before, format) : appointment.service;
    return { change: 'moved', what: `${visit} to ${describeSlot(appointment, format)}` };
  }

  /**
   * A refused proposal: the reason is in the gate's audit entry; the caller is taken down the
   * proper path, or asked again for what was missing or malformed. Anything else (a choice not
   * open now, no such tool) adds nothing: the open question is asked again, or the caller asked
   * to clarify.
   */
  async refused(decision: Extract<GateDecision, { decision: 'refuse' }>): Promise<void> {
    const { code, intent } = decision;
    if (code === 'not_verified') {
      if (intent) this.apply({ type: 'intent_stated', intent });
      return this.askToVerify();
    }
    if (code === 'verification_locked') return this.askToVerify();
    if (code === 'needs_confirmation' && intent) return this.#pursue(intent);
    if (code === 'invalid_arguments' && decision.invalid) this.reask(decision.invalid);
  }
}

/** "1 open invoice: $129.00 due Wednesday, June 10." (en-US; amounts and dates as `format` tells them). */
function invoicesNote(invoices: Invoice[], format: DeskFormat): string {
  if (invoices.length === 0) return 'The caller has no open invoices.';
  const each = invoices.map(
    (invoice) => `${format.money(invoice.amountCents, invoice.currency)} due ${format.date(invoice.dueDate)}`,
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
