import type { Appointment, Crm, Slot } from './crm.ts';
import { MAX_ZIP_ATTEMPTS, verificationLocked, type Dialog } from './dialog.ts';
import { describeSlot, describeVisit, INTENT_PHRASES } from './desk-prompts.ts';
import type { DeskFormat } from './desk-format.ts';

/**
 * What a UI needs to rebuild a service-desk screen after a reconnect (the `resync` snapshot's
 * `view`): the verification status, what the caller is asked for, the options on screen by
 * position (what they say, never their ids), and what a yes would confirm, dates and times as the
 * caller is told them (`format`). Never the ZIP, the phone, customer or appointment ids.
 */
export interface DeskView {
  verification: {
    status: 'unverified' | 'verified' | 'locked';
    /** The verified caller's name, as they were greeted. */
    name: string | null;
    /** Verification attempts left before a person is offered instead; null once verified. */
    attemptsLeft: number | null;
  };
  task: 'cancel' | 'reschedule' | 'schedule' | null;
  /** What the caller's next answer is expected to be. */
  awaiting: 'verification' | 'appointment' | 'window' | 'address' | 'confirmation' | 'clarification' | null;
  /** The options on screen, numbered as they were offered ("the second one"). */
  options: { kind: 'appointment' | 'window' | 'intent'; items: Array<{ position: number; label: string }> } | null;
  /** What a yes would do now, and what it is about. */
  confirmation: {
    action: 'cancel' | 'reschedule' | 'book' | 'connect_person';
    appointment: string | null;
    window: string | null;
  } | null;
  /** The address a new visit would be at, while the caller is asked to confirm it. */
  address: string | null;
}

const numbered = <T>(items: T[], label: (item: T) => string) =>
  items.map((item, index) => ({ position: index + 1, label: label(item) }));

export async function deskView(
  dialog: Dialog,
  presented: { appointments: Appointment[]; slots: Slot[] },
  crm: Pick<Crm, 'getCustomer'>,
  format: DeskFormat,
): Promise<DeskView> {
  const customer = dialog.customerId ? await crm.getCustomer(dialog.customerId) : undefined;
  const visit = (appointment: Appointment) => describeVisit(appointment, format);
  const slot = (window: Slot) => describeSlot(window, format);
  const appointments = { kind: 'appointment' as const, items: numbered(presented.appointments, visit) };
  const windows = { kind: 'window' as const, items: numbered(presented.slots, slot) };
  const selected = {
    appointment: presented.appointments.find((a) => a.id === dialog.selectedAppointmentId) ?? null,
    window: presented.slots.find((s) => s.id === dialog.selectedSlotId) ?? null,
  };
  const confirming = (action: NonNullable<DeskView['confirmation']>['action']) => ({
    action,
    appointment: selected.appointment ? visit(selected.appointment) : null,
    window: selected.window ? slot(selected.window) : null,
  });
  const view: DeskView = {
    verification: {
      status: customer ? 'verified' : verificationLocked(dialog) ? 'locked' : 'unverified',
      name: customer?.name ?? null,
      attemptsLeft: dialog.customerId ? null : Math.max(0, MAX_ZIP_ATTEMPTS - dialog.zipAttempts),
    },
    task: dialog.purpose,
    awaiting: null,
    options: null,
    confirmation: null,
    address: null,
  };
  switch (dialog.state) {
    case 'CollectingVerification':
      return { ...view, awaiting: verificationLocked(dialog) ? null : 'verification' };
    case 'PresentingAppointments':
      return { ...view, awaiting: dialog.purpose ? 'appointment' : null, options: appointments };
    case 'PresentingSlots':
      return { ...view, awaiting: 'window', options: windows };
    case 'PendingScheduleDetails':
      return { ...view, awaiting: 'address', address: customer?.address ?? null };
    case 'PendingCancellationConfirmation':
      return { ...view, awaiting: 'confirmation', options: appointments, confirmation: confirming('cancel') };
    case 'PendingRescheduleConfirmation':
      return { ...view, awaiting: 'confirmation', options: windows, confirmation: confirming('reschedule') };
    case 'PendingScheduleConfirmation':
      return { ...view, awaiting: 'confirmation', options: windows, confirmation: confirming('book') };
    case 'PendingEscalationConfirmation':
      return { ...view, awaiting: 'confirmation', confirmation: confirming('connect_person') };
    case 'DisambiguatingIntent':
      return {
        ...view,
        awaiting: 'clarification',
        options: { kind: 'intent', items: numbered(dialog.candidates, (intent) => INTENT_PHRASES[intent]) },
      };
    default:
      return view;
  }
}
