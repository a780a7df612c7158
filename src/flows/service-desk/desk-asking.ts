import { transition, verificationLocked, type Dialog, type DialogEvent, type EscalationReason } from './dialog.ts';
import type { GateDecision } from './gate.ts';
import { CONFIRM_QUESTIONS, doneNote, INTENT_PHRASES, OFFER_PERSON, type Facts } from './desk-prompts.ts';
import type { Ledger } from './desk-ledger.ts';
import type { DeskTurnEnv } from './desk-turn.ts';

export const ASK_WHAT = 'Ask what the caller would like to do.';
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
    `What the caller picked is not one of their appointments listed: say so, list them below again and ask ` +
    `which one to ${purpose}.`,
};
/** Verification asked for again (a reply that answered nothing): it acknowledges no request, since none was made. */
const VERIFY_FIRST = {
  phone: 'Before anything else, ask for the phone number and ZIP code on the account to verify the caller.',
  zip:
    'Before anything else, ask for the 5-digit ZIP code on the account to verify the caller (their phone number ' +
    'is already known).',
};
const VERIFY_AGAIN_ZIP =
  'Verification failed. Ask again for the 5-digit ZIP code on the account, or for the phone number on the account ' +
  'if it is not the one they are calling from.';

type Invalid = NonNullable<Extract<GateDecision, { decision: 'refuse' }>['invalid']>;

/**
 * A service-desk turn's dialog as the turn changes it, the facts the narrator speaks from, and
 * every question the desk asks the caller. What the turn does (tools, choices, changes) is
 * `TurnState`'s, which builds on this.
 */
export class AskingTurn {
  dialog: Dialog;
  readonly facts: Facts;
  protected readonly env: DeskTurnEnv;
  protected readonly ledger: Ledger;

  constructor(env: DeskTurnEnv, ledger: Ledger) {
    this.env = env;
    this.ledger = ledger;
    this.dialog = env.dialog;
    this.facts = {
      userText: env.userText,
      notes: env.dialog.untold ? [doneNote(env.dialog.untold, true)] : [],
      appointments: [],
      slots: [],
      selected: { appointment: null, slot: null },
    };
  }

  /**
   * Applies an event; a refused one goes to the audit only (the caller hears what the caller of
   * `apply` says instead).
   */
  apply(event: DialogEvent): boolean {
    const result = transition(this.dialog, event);
    if (result.ok) this.dialog = result.dialog;
    else this.ledger.audit('transition', { event: event.type, refused: result.reason });
    return result.ok;
  }

  /**
   * A failed verification: the same words whether the phone is unknown or the ZIP wrong (which
   * phones are customers is not told); the last allowed attempt offers a person instead.
   */
  protected notVerified(reason: string): void {
    // No usable phone (none given, or not a number): no guess was made, so it does not count.
    if (reason === 'no_phone')
      return void this.facts.notes.push(
        'Ask for the phone number on the account, with the ZIP code: no valid phone number was given.',
      );
    this.apply({ type: 'verification_failed' });
    if (this.dialog.state === 'PendingEscalationConfirmation') this.offerPerson('verification_failed');
    else if (this.env.callerPhone) this.facts.notes.push(VERIFY_AGAIN_ZIP);
    else this.facts.notes.push('Verification failed. Ask again for the phone number and ZIP code on the account.');
  }

  /**
   * Asks the caller to verify (only for the ZIP when their phone is known), acknowledging the
   * request they just made, or (`acknowledging` false) as the question still open; once they have
   * used up their attempts, offers a person.
   */
  protected askToVerify(acknowledging = true): void {
    if (!verificationLocked(this.dialog)) {
      const zipOnly = this.env.callerPhone !== null;
      if (!acknowledging) return void this.facts.notes.push(zipOnly ? VERIFY_FIRST.zip : VERIFY_FIRST.phone);
      return void this.facts.notes.push(
        zipOnly
          ? ASK_ZIP
          : 'Ask for the phone number and ZIP code on the account to verify the caller, acknowledging what they ' +
              'asked.',
      );
    }
    if (this.apply({ type: 'escalation_offered', reason: 'verification_failed' }))
      this.offerPerson('verification_failed');
  }

  /**
   * Offers a person, who calls back: asked for the number to call when none is known (the
   * channel's, the session's, or the verified account's).
   */
  protected offerPerson(reason: EscalationReason): void {
    const known = this.env.callerPhone !== null || this.dialog.customerId !== null;
    this.facts.notes.push(OFFER_PERSON[reason][known ? 'known' : 'unknown']);
  }

  protected async askAddress(): Promise<void> {
    const customer = this.dialog.customerId ? await this.env.crm.getCustomer(this.dialog.customerId) : undefined;
    this.facts.notes.push(
      'Before looking for windows, ask the caller to confirm the visit is at the address on file: ' +
        `${customer?.address ?? 'unknown'}.`,
    );
  }

  /** Asks the question the dialog's state waits on, naming what it is about. False when it waits on none. */
  async askAgain(): Promise<boolean> {
    const { state, purpose } = this.dialog;
    const { presented } = this.env;
    if (CONFIRM_QUESTIONS[state]) this.confirmQuestion();
    else if (state === 'DisambiguatingIntent') this.askWhich();
    // Nothing is done for an unverified caller before verifying (policies aside): that is the open question.
    else if (state === 'CollectingVerification') this.askToVerify(false);
    else if (state === 'PendingEscalationConfirmation') this.offerPerson(this.dialog.escalationReason ?? 'requested');
    else if (state === 'PendingScheduleDetails') await this.askAddress();
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
  protected askWhich(): void {
    const options = this.dialog.candidates.map((intent) => INTENT_PHRASES[intent]);
    const listed = options.length > 1 ? `${options.slice(0, -1).join(', ')} or ${options.at(-1)}` : options.join('');
    this.facts.notes.push(`The request is unclear. Ask whether the caller wants to ${listed}.`);
  }

  /**
   * A pick that was not among the options: the options are listed again and asked for; from a
   * confirmation the dialog goes back to choosing, so a yes cannot confirm the earlier pick.
   */
  protected relist(kind: 'appointments' | 'windows'): void {
    const { presented } = this.env;
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
  protected confirmQuestion(): void {
    const { presented } = this.env;
    this.facts.selected = {
      appointment: presented.appointments.find((a) => a.id === this.dialog.selectedAppointmentId) ?? null,
      slot: presented.slots.find((s) => s.id === this.dialog.selectedSlotId) ?? null,
    };
    this.facts.notes.push(CONFIRM_QUESTIONS[this.dialog.state]!);
  }

  /** A specific re-ask for what the caller gave that cannot be used (a ZIP code that is not 5 digits). */
  protected reask(invalid: Invalid): void {
    const field = (path: string) => invalid.fields.find((f) => f.path === path);
    if (invalid.name === 'verify_account' && this.dialog.customerId === null) {
      if (verificationLocked(this.dialog)) return this.askToVerify();
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
    if (invalid.name === 'select_slot') return this.relist('windows');
    if (invalid.name === 'select_appointment') return this.relist('appointments');
  }
}
