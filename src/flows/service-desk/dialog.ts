import { z } from 'zod';

/** The states of spec 004's service-desk conversation; code owns them, never the model. */
export const DIALOG_STATES = [
  'CollectingVerification',
  'VerifiedIdle',
  'DisambiguatingIntent',
  'PresentingAppointments',
  'PresentingSlots',
  'PendingCancellationConfirmation',
  'PendingRescheduleConfirmation',
  'PendingScheduleDetails',
  'PendingScheduleConfirmation',
  /**
   * A person was offered (the address on file is not where the visit is, verification failed), or
   * asked for with no number known to call back: yes, or the number, opens a ticket.
   */
  'PendingEscalationConfirmation',
  'Completed',
] as const;
export type DialogState = (typeof DIALOG_STATES)[number];

/** What the caller wants, as the interpreter classifies it. */
export const INTENTS = [
  'next_appointment',
  'list_appointments',
  'cancel',
  'reschedule',
  'schedule',
  'billing',
  'policy',
  'human',
  'other',
] as const;
export type Intent = (typeof INTENTS)[number];

/** After this many failed verifications, verifying stops and a person is offered. */
export const MAX_ZIP_ATTEMPTS = 3;

/**
 * Why a person is offered, and what the ticket then says: code offers one (`verification_failed`,
 * `address_change`), or the caller asked for one and is asked for a number to be called back on
 * (`requested`).
 */
export const ESCALATION_REASONS = ['verification_failed', 'address_change', 'requested'] as const;
export type EscalationReason = (typeof ESCALATION_REASONS)[number];
const TICKET_REASONS: Record<EscalationReason, string> = {
  verification_failed: 'the caller could not be verified',
  address_change: 'the visit is not at the address on file',
  requested: 'the caller asked for a person',
};

export const dialogSchema = z.object({
  state: z.enum(DIALOG_STATES),
  customerId: z.string().nullable(),
  zipAttempts: z.number().int().min(0),
  /** Stated before verification and answered by the turn that verifies (durably kept meanwhile). */
  pendingIntent: z.enum(INTENTS).nullable(),
  /** Why appointments or slots are on the table. */
  purpose: z.enum(['cancel', 'reschedule', 'schedule']).nullable(),
  presentedAppointmentIds: z.array(z.string()),
  presentedSlotIds: z.array(z.string()),
  selectedAppointmentId: z.string().nullable(),
  selectedSlotId: z.string().nullable(),
  addressConfirmed: z.boolean(),
  /** What an unclear request could mean (DisambiguatingIntent): the caller is asked which. */
  candidates: z.array(z.enum(INTENTS)).default([]),
  /**
   * The task a clarification interrupted (DisambiguatingIntent entered from it): "neither", or
   * picking that same task again, goes back to it as it was.
   */
  resume: z.enum(DIALOG_STATES).nullable().default(null),
  /** Why a person is being offered (PendingEscalationConfirmation): what their ticket is about. */
  escalationReason: z.enum(ESCALATION_REASONS).nullable().default(null),
  /**
   * A change carried out whose outcome the caller may not have heard (the turn that made it was
   * interrupted or failed before replying): saved with the change, told by the next reply.
   */
  untold: z
    .object({ change: z.enum(['cancelled', 'moved', 'booked', 'escalated']), what: z.string() })
    .nullable()
    .default(null),
});
export type Dialog = z.infer<typeof dialogSchema>;

export const initialDialog = (): Dialog => ({
  state: 'CollectingVerification',
  customerId: null,
  zipAttempts: 0,
  pendingIntent: null,
  purpose: null,
  presentedAppointmentIds: [],
  presentedSlotIds: [],
  selectedAppointmentId: null,
  selectedSlotId: null,
  addressConfirmed: false,
  candidates: [],
  resume: null,
  escalationReason: null,
  untold: null,
});

/** Everything that can happen to a dialog. Tools and the interpreter produce these; `transition` judges them. */
export type DialogEvent =
  | { type: 'intent_stated'; intent: Intent }
  | { type: 'verified'; customerId: string }
  | { type: 'verification_failed' }
  | { type: 'intent_unclear'; candidates: Intent[] }
  | { type: 'intent_picked'; intent: Intent }
  | { type: 'appointments_presented'; ids: string[]; purpose: 'cancel' | 'reschedule' | null }
  | { type: 'appointment_selected'; id: string }
  | { type: 'schedule_requested' }
  | { type: 'address_confirmed' }
  | { type: 'slots_presented'; ids: string[] }
  | { type: 'slot_selected'; id: string }
  | { type: 'escalation_offered'; reason: EscalationReason }
  | { type: 'confirmed' }
  | { type: 'declined' }
  | { type: 'escalated' };

export type TransitionResult = { ok: true; dialog: Dialog } | { ok: false; reason: string };

const PENDING_CONFIRMATION: readonly DialogState[] = [
  'PendingCancellationConfirmation',
  'PendingRescheduleConfirmation',
  'PendingScheduleConfirmation',
  'PendingEscalationConfirmation',
];
/** The states where a correction picks again among what was offered, by kind. */
const PICKING_APPOINTMENT: readonly DialogState[] = [
  'PresentingAppointments',
  'PendingCancellationConfirmation',
  'PresentingSlots',
  'PendingRescheduleConfirmation',
];
const PICKING_SLOT: readonly DialogState[] = [
  'PresentingSlots',
  'PendingRescheduleConfirmation',
  'PendingScheduleConfirmation',
];

/** Whether something waits on the caller: a choice, a yes, the address, a clarification, or a request to verify for. */
export function pendingTask(dialog: Pick<Dialog, 'state' | 'purpose' | 'pendingIntent'>): boolean {
  switch (dialog.state) {
    case 'VerifiedIdle':
    case 'Completed':
      return false;
    case 'CollectingVerification':
      return dialog.pendingIntent !== null;
    case 'PresentingAppointments':
      return dialog.purpose !== null;
    default:
      return true;
  }
}

/** The task an intent names, when it is one the dialog carries out step by step. */
const TASK_OF: Partial<Record<Intent, Dialog['purpose']>> = {
  cancel: 'cancel',
  reschedule: 'reschedule',
  schedule: 'schedule',
};

/** The caller is still to verify: collecting it, or asked what they meant before doing so. */
const collecting = (dialog: Dialog) =>
  dialog.customerId === null && (dialog.state === 'CollectingVerification' || dialog.state === 'DisambiguatingIntent');

const refuse = (dialog: Dialog, event: DialogEvent, why = `not valid in ${dialog.state}`): TransitionResult => ({
  ok: false,
  reason: `${event.type}: ${why}`,
});
const to = (dialog: Dialog, patch: Partial<Dialog>): TransitionResult => ({
  ok: true,
  dialog: { ...dialog, ...patch },
});

/** Back to idle with nothing pending: a finished or abandoned task never hijacks a later turn. */
function cleared(dialog: Dialog, state: DialogState): Partial<Dialog> {
  return {
    state,
    purpose: null,
    presentedAppointmentIds: [],
    presentedSlotIds: [],
    selectedAppointmentId: null,
    selectedSlotId: null,
    addressConfirmed: false,
    candidates: [],
    resume: null,
    escalationReason: null,
  };
}

/** The one way a dialog changes. Pure: the same dialog and event always give the same result. */
export function transition(dialog: Dialog, event: DialogEvent): TransitionResult {
  const verified = dialog.customerId !== null;
  switch (event.type) {
    case 'intent_stated':
      // Before verification the intent waits; afterwards the turn acts on it and it is spent.
      return to(dialog, { pendingIntent: verified ? null : event.intent });
    case 'verified':
      if (!collecting(dialog)) return refuse(dialog, event, 'already verified');
      if (verificationLocked(dialog)) return refuse(dialog, event, 'too many failed attempts');
      return to(dialog, { ...cleared(dialog, 'VerifiedIdle'), customerId: event.customerId, zipAttempts: 0 });
    case 'verification_failed': {
      if (!collecting(dialog)) return refuse(dialog, event);
      const zipAttempts = dialog.zipAttempts + 1;
      // No more guesses: the caller is offered a person instead.
      if (zipAttempts >= MAX_ZIP_ATTEMPTS)
        return to(dialog, {
          ...cleared(dialog, 'PendingEscalationConfirmation'),
          zipAttempts,
          escalationReason: 'verification_failed',
        });
      return to(dialog, { ...cleared(dialog, 'CollectingVerification'), zipAttempts });
    }
    case 'intent_unclear': {
      // From anywhere: the task in progress is kept as it was, to go back to if the caller meant neither.
      const candidates = [...new Set(event.candidates)];
      if (candidates.length < 2) return refuse(dialog, event, 'needs two or more different candidates');
      const resume =
        dialog.state === 'DisambiguatingIntent' ? dialog.resume : pendingTask(dialog) ? dialog.state : null;
      return to(dialog, { state: 'DisambiguatingIntent', candidates, resume });
    }
    case 'intent_picked': {
      if (dialog.state !== 'DisambiguatingIntent') return refuse(dialog, event);
      // The task that was interrupted, named again: it goes on where it was.
      if (dialog.resume && dialog.purpose !== null && TASK_OF[event.intent] === dialog.purpose)
        return to(dialog, { state: dialog.resume, candidates: [], resume: null });
      return to(dialog, {
        ...cleared(dialog, verified ? 'VerifiedIdle' : 'CollectingVerification'),
        pendingIntent: verified ? null : event.intent,
      });
    }
    case 'appointments_presented':
      // From any verified state: a caller who changes their mind starts the new path, and whatever was
      // pending is dropped.
      if (!verified) return refuse(dialog, event);
      return to(dialog, {
        ...cleared(dialog, 'PresentingAppointments'),
        presentedAppointmentIds: [...event.ids],
        purpose: event.purpose,
      });
    case 'appointment_selected':
      // Also a correction ("actually the other one") where one was already picked: it replaces the pick.
      if (!PICKING_APPOINTMENT.includes(dialog.state)) return refuse(dialog, event);
      if (!dialog.presentedAppointmentIds.includes(event.id))
        return refuse(dialog, event, 'not among the appointments presented');
      if (dialog.purpose === 'cancel')
        return to(dialog, { state: 'PendingCancellationConfirmation', selectedAppointmentId: event.id });
      if (dialog.purpose === 'reschedule') return to(dialog, { selectedAppointmentId: event.id });
      return refuse(dialog, event, 'the appointments were shown for information, not to pick one');
    case 'schedule_requested':
      if (!verified) return refuse(dialog, event);
      return to(dialog, { ...cleared(dialog, 'PendingScheduleDetails'), purpose: 'schedule' });
    case 'address_confirmed':
      if (dialog.state !== 'PendingScheduleDetails') return refuse(dialog, event);
      return to(dialog, { addressConfirmed: true });
    case 'slots_presented': {
      const forReschedule =
        dialog.state === 'PresentingAppointments' &&
        dialog.purpose === 'reschedule' &&
        dialog.selectedAppointmentId !== null;
      const forSchedule = dialog.state === 'PendingScheduleDetails' && dialog.addressConfirmed;
      // Other windows, while choosing one or asked to confirm one: back to choosing.
      const again =
        dialog.state === 'PresentingSlots' ||
        dialog.state === 'PendingRescheduleConfirmation' ||
        dialog.state === 'PendingScheduleConfirmation';
      if (!forReschedule && !forSchedule && !again)
        return refuse(
          dialog,
          event,
          'needs an appointment chosen to move, or the address on file confirmed for a new one',
        );
      return to(dialog, { state: 'PresentingSlots', presentedSlotIds: [...event.ids], selectedSlotId: null });
    }
    case 'slot_selected':
      if (!PICKING_SLOT.includes(dialog.state)) return refuse(dialog, event);
      if (!dialog.presentedSlotIds.includes(event.id)) return refuse(dialog, event, 'not among the slots presented');
      return to(dialog, {
        state: dialog.purpose === 'reschedule' ? 'PendingRescheduleConfirmation' : 'PendingScheduleConfirmation',
        selectedSlotId: event.id,
      });
    case 'escalation_offered':
      // Offering a person replaces whatever was pending: a yes now can only mean the person.
      return to(dialog, { ...cleared(dialog, 'PendingEscalationConfirmation'), escalationReason: event.reason });
    case 'confirmed':
      // The side effect ran (exactly once) on this yes; the task is finished.
      if (!PENDING_CONFIRMATION.includes(dialog.state)) return refuse(dialog, event, 'nothing is waiting for a yes');
      return to(dialog, cleared(dialog, 'Completed'));
    case 'declined':
      // "Neither" to a clarification: back to the task it interrupted, as it was.
      if (dialog.state === 'DisambiguatingIntent')
        return dialog.resume
          ? to(dialog, { state: dialog.resume, candidates: [], resume: null })
          : to(dialog, cleared(dialog, verified ? 'VerifiedIdle' : 'CollectingVerification'));
      // "Never mind" before verification: the request waiting for it is dropped.
      if (dialog.state === 'CollectingVerification')
        return dialog.pendingIntent ? to(dialog, { pendingIntent: null }) : refuse(dialog, event);
      if (
        !PENDING_CONFIRMATION.includes(dialog.state) &&
        !['PresentingSlots', 'PresentingAppointments', 'PendingScheduleDetails'].includes(dialog.state)
      )
        return refuse(dialog, event);
      return to(dialog, cleared(dialog, verified ? 'VerifiedIdle' : 'CollectingVerification'));
    case 'escalated':
      return to(dialog, { ...cleared(dialog, 'Completed'), pendingIntent: null });
  }
}

/** Whether this conversation has used up its verification attempts. */
export const verificationLocked = (dialog: Pick<Dialog, 'customerId' | 'zipAttempts'>): boolean =>
  dialog.customerId === null && dialog.zipAttempts >= MAX_ZIP_ATTEMPTS;

/** The side effect a confirmation state is waiting for, with its arguments from the dialog (never from the model). */
export function pendingAction(
  dialog: Dialog,
):
  | { tool: 'cancel_appointment'; appointmentId: string }
  | { tool: 'reschedule_appointment'; appointmentId: string; slotId: string }
  | { tool: 'create_appointment'; slotId: string }
  | { tool: 'escalate'; reason: string }
  | null {
  if (dialog.state === 'PendingCancellationConfirmation' && dialog.selectedAppointmentId)
    return { tool: 'cancel_appointment', appointmentId: dialog.selectedAppointmentId };
  if (dialog.state === 'PendingRescheduleConfirmation' && dialog.selectedAppointmentId && dialog.selectedSlotId) {
    return {
      tool: 'reschedule_appointment',
      appointmentId: dialog.selectedAppointmentId,
      slotId: dialog.selectedSlotId,
    };
  }
  if (dialog.state === 'PendingScheduleConfirmation' && dialog.selectedSlotId)
    return { tool: 'create_appointment', slotId: dialog.selectedSlotId };
  if (dialog.state === 'PendingEscalationConfirmation' && dialog.escalationReason)
    return { tool: 'escalate', reason: TICKET_REASONS[dialog.escalationReason] };
  return null;
}
