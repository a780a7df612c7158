import { describe, expect, it } from 'vitest';
import {
  DIALOG_STATES,
  initialDialog,
  MAX_ZIP_ATTEMPTS,
  pendingAction,
  transition,
  type Dialog,
  type DialogEvent,
  type DialogState,
} from './dialog.ts';

/** A typical dialog in each state, with what that state implies (verified, something presented or selected). */
function inState(state: DialogState, purpose: Dialog['purpose'] = null): Dialog {
  const base = { ...initialDialog(), state, customerId: state === 'CollectingVerification' ? null : 'cus_1' };
  switch (state) {
    case 'PresentingAppointments':
      return { ...base, presentedAppointmentIds: ['apt_1', 'apt_2'], purpose: purpose ?? 'cancel' };
    case 'PresentingSlots':
      return {
        ...base,
        presentedAppointmentIds: ['apt_1', 'apt_2'],
        presentedSlotIds: ['slot_1'],
        purpose: purpose ?? 'reschedule',
        selectedAppointmentId: 'apt_1',
      };
    case 'PendingCancellationConfirmation':
      return { ...base, purpose: 'cancel', presentedAppointmentIds: ['apt_1'], selectedAppointmentId: 'apt_1' };
    case 'PendingRescheduleConfirmation':
      return {
        ...base,
        purpose: 'reschedule',
        presentedAppointmentIds: ['apt_1', 'apt_2'],
        selectedAppointmentId: 'apt_1',
        presentedSlotIds: ['slot_1', 'slot_2'],
        selectedSlotId: 'slot_1',
      };
    case 'PendingScheduleDetails':
      return { ...base, purpose: 'schedule', addressConfirmed: true };
    case 'PendingScheduleConfirmation':
      return { ...base, purpose: 'schedule', presentedSlotIds: ['slot_1', 'slot_2'], selectedSlotId: 'slot_1' };
    case 'PendingEscalationConfirmation':
      return { ...base, escalationReason: 'address_change' };
    default:
      return base;
  }
}

const EVENTS: Record<DialogEvent['type'], DialogEvent> = {
  intent_stated: { type: 'intent_stated', intent: 'next_appointment' },
  verified: { type: 'verified', customerId: 'cus_9' },
  verification_failed: { type: 'verification_failed' },
  intent_unclear: { type: 'intent_unclear', candidates: ['reschedule', 'cancel'] },
  intent_picked: { type: 'intent_picked', intent: 'billing' },
  appointments_presented: { type: 'appointments_presented', ids: ['apt_1'], purpose: 'cancel' },
  appointment_selected: { type: 'appointment_selected', id: 'apt_1' },
  schedule_requested: { type: 'schedule_requested' },
  address_confirmed: { type: 'address_confirmed' },
  slots_presented: { type: 'slots_presented', ids: ['slot_1'] },
  slot_selected: { type: 'slot_selected', id: 'slot_1' },
  escalation_offered: { type: 'escalation_offered', reason: 'address_change' },
  confirmed: { type: 'confirmed' },
  declined: { type: 'declined' },
  escalated: { type: 'escalated' },
};

const PENDING = [
  'PendingCancellationConfirmation',
  'PendingRescheduleConfirmation',
  'PendingScheduleConfirmation',
  'PendingEscalationConfirmation',
];
const VERIFIED = DIALOG_STATES.filter((state) => state !== 'CollectingVerification');
/** Where each event is valid, for the typical dialog of each state. Everything else must be refused. */
const VALID: Record<DialogEvent['type'], readonly string[]> = {
  intent_stated: DIALOG_STATES,
  verified: ['CollectingVerification'],
  verification_failed: ['CollectingVerification'],
  intent_unclear: DIALOG_STATES,
  intent_picked: ['DisambiguatingIntent'],
  appointments_presented: VERIFIED,
  appointment_selected: [
    'PresentingAppointments',
    'PendingCancellationConfirmation',
    'PresentingSlots',
    'PendingRescheduleConfirmation',
  ],
  schedule_requested: VERIFIED,
  address_confirmed: ['PendingScheduleDetails'],
  slots_presented: [
    'PresentingSlots',
    'PendingScheduleDetails',
    'PendingRescheduleConfirmation',
    'PendingScheduleConfirmation',
  ],
  slot_selected: ['PresentingSlots', 'PendingRescheduleConfirmation', 'PendingScheduleConfirmation'],
  escalation_offered: DIALOG_STATES,
  confirmed: PENDING,
  declined: [...PENDING, 'PresentingSlots', 'PresentingAppointments', 'PendingScheduleDetails', 'DisambiguatingIntent'],
  escalated: DIALOG_STATES,
};

describe('dialog transitions', () => {
  for (const [type, event] of Object.entries(EVENTS) as Array<[DialogEvent['type'], DialogEvent]>) {
    it.each(DIALOG_STATES.map((state) => [state, VALID[type].includes(state)] as const))(
      `${type} from %s: valid %s`,
      (state, valid) => {
        const result = transition(inState(state), event);
        expect(result.ok).toBe(valid);
        if (!result.ok) expect(result.reason).toMatch(new RegExp(`^${type}: `));
      },
    );
  }

  it('keeps the intent stated before verification, and spends one stated after', () => {
    const waiting = transition(initialDialog(), EVENTS.intent_stated);
    expect(waiting.ok && waiting.dialog.pendingIntent).toBe('next_appointment');
    const verified = transition(inState('VerifiedIdle'), EVENTS.intent_stated);
    expect(verified.ok && verified.dialog.pendingIntent).toBeNull();
    const after = waiting.ok ? transition(waiting.dialog, EVENTS.verified) : undefined;
    expect(after?.ok && after.dialog).toMatchObject({
      state: 'VerifiedIdle',
      customerId: 'cus_9',
      pendingIntent: 'next_appointment',
    });
  });

  it('stops verifying after three failed attempts and offers a person instead', () => {
    let dialog = initialDialog();
    for (let attempt = 1; attempt <= MAX_ZIP_ATTEMPTS; attempt++) {
      const result = transition(dialog, EVENTS.verification_failed);
      if (!result.ok) throw new Error(result.reason);
      dialog = result.dialog;
      const last = attempt === MAX_ZIP_ATTEMPTS;
      expect(dialog).toMatchObject({
        zipAttempts: attempt,
        state: last ? 'PendingEscalationConfirmation' : 'CollectingVerification',
        escalationReason: last ? 'verification_failed' : null,
      });
    }
    expect(pendingAction(dialog)).toEqual({ tool: 'escalate', reason: 'the caller could not be verified' });
    // A no to the person leaves the caller unverified, and a right ZIP no longer verifies.
    const declined = transition(dialog, EVENTS.declined);
    expect(declined.ok && declined.dialog.state).toBe('CollectingVerification');
    expect(declined.ok && transition(declined.dialog, EVENTS.verified)).toEqual({
      ok: false,
      reason: 'verified: too many failed attempts',
    });
  });

  it('selects only what was presented', () => {
    expect(transition(inState('PresentingAppointments'), { type: 'appointment_selected', id: 'apt_other' })).toEqual({
      ok: false,
      reason: 'appointment_selected: not among the appointments presented',
    });
    expect(transition(inState('PresentingSlots'), { type: 'slot_selected', id: 'slot_9' })).toEqual({
      ok: false,
      reason: 'slot_selected: not among the slots presented',
    });
  });

  it('routes a selection by why the options were shown', () => {
    const cancel = transition(inState('PresentingAppointments', 'cancel'), EVENTS.appointment_selected);
    expect(cancel.ok && cancel.dialog.state).toBe('PendingCancellationConfirmation');
    const reschedule = transition(inState('PresentingAppointments', 'reschedule'), EVENTS.appointment_selected);
    expect(reschedule.ok && reschedule.dialog).toMatchObject({
      state: 'PresentingAppointments',
      selectedAppointmentId: 'apt_1',
    });
    const slots = reschedule.ok ? transition(reschedule.dialog, EVENTS.slots_presented) : undefined;
    expect(slots?.ok && slots.dialog.state).toBe('PresentingSlots');
    const info = transition({ ...inState('PresentingAppointments'), purpose: null }, EVENTS.appointment_selected);
    expect(info.ok).toBe(false);
    const rescheduleSlot = transition(inState('PresentingSlots', 'reschedule'), EVENTS.slot_selected);
    expect(rescheduleSlot.ok && rescheduleSlot.dialog.state).toBe('PendingRescheduleConfirmation');
    const scheduleSlot = transition(inState('PresentingSlots', 'schedule'), EVENTS.slot_selected);
    expect(scheduleSlot.ok && scheduleSlot.dialog.state).toBe('PendingScheduleConfirmation');
  });

  it('scheduling asks for the address on file before slots, and never goes through rescheduling', () => {
    const details = transition(inState('VerifiedIdle'), EVENTS.schedule_requested);
    expect(details.ok && details.dialog).toMatchObject({
      state: 'PendingScheduleDetails',
      purpose: 'schedule',
      selectedAppointmentId: null,
    });
    const early = details.ok ? transition(details.dialog, EVENTS.slots_presented) : undefined;
    expect(early?.ok).toBe(false);
  });

  it('a finished or declined task leaves nothing pending', () => {
    for (const state of PENDING as DialogState[]) {
      for (const event of [EVENTS.confirmed, EVENTS.declined]) {
        const result = transition(inState(state), event);
        expect(result.ok && result.dialog).toMatchObject({
          presentedAppointmentIds: [],
          presentedSlotIds: [],
          selectedAppointmentId: null,
          selectedSlotId: null,
          purpose: null,
          escalationReason: null,
        });
        expect(result.ok && pendingAction(result.dialog)).toBeNull();
      }
    }
  });

  it('a new request while something waits for a yes or a choice starts its own path and drops the pending one', () => {
    for (const state of [
      ...PENDING,
      'PresentingAppointments',
      'PresentingSlots',
      'PendingScheduleDetails',
    ] as DialogState[]) {
      const reschedule = transition(inState(state, 'cancel'), {
        type: 'appointments_presented',
        ids: ['apt_1', 'apt_2'],
        purpose: 'reschedule',
      });
      expect(reschedule.ok && reschedule.dialog).toMatchObject({
        state: 'PresentingAppointments',
        purpose: 'reschedule',
        selectedAppointmentId: null,
        selectedSlotId: null,
        presentedSlotIds: [],
      });
      expect(reschedule.ok && pendingAction(reschedule.dialog)).toBeNull();
      const schedule = transition(inState(state), EVENTS.schedule_requested);
      expect(schedule.ok && schedule.dialog).toMatchObject({
        state: 'PendingScheduleDetails',
        purpose: 'schedule',
        selectedAppointmentId: null,
        selectedSlotId: null,
        addressConfirmed: false,
      });
    }
  });

  it('asking for other windows at a confirmation goes back to choosing one, for the same task', () => {
    const again = transition(inState('PendingRescheduleConfirmation'), { type: 'slots_presented', ids: ['slot_2'] });
    expect(again.ok && again.dialog).toMatchObject({
      state: 'PresentingSlots',
      purpose: 'reschedule',
      selectedAppointmentId: 'apt_1',
      selectedSlotId: null,
      presentedSlotIds: ['slot_2'],
    });
  });

  it(
    'a rejected address leads to the offer of a person, never to booking there: yes is the ticket, no drops ' +
      'the booking',
    () => {
      const offered = transition(inState('PendingScheduleDetails'), EVENTS.escalation_offered);
      expect(offered.ok && offered.dialog).toMatchObject({
        state: 'PendingEscalationConfirmation',
        purpose: null,
        addressConfirmed: false,
        escalationReason: 'address_change',
      });
      expect(offered.ok && transition(offered.dialog, EVENTS.address_confirmed).ok).toBe(false);
      expect(offered.ok && transition(offered.dialog, EVENTS.slots_presented).ok).toBe(false);
      const no = offered.ok ? transition(offered.dialog, EVENTS.declined) : undefined;
      expect(no?.ok && no.dialog).toMatchObject({ state: 'VerifiedIdle', escalationReason: null });
      const unverified = transition(
        { ...initialDialog(), state: 'PendingEscalationConfirmation', escalationReason: 'verification_failed' },
        EVENTS.declined,
      );
      expect(unverified.ok && unverified.dialog.state).toBe('CollectingVerification');
    },
  );

  it('a replayed yes does nothing: the second confirmation is refused', () => {
    const first = transition(inState('PendingCancellationConfirmation'), EVENTS.confirmed);
    expect(first.ok).toBe(true);
    expect(first.ok && transition(first.dialog, EVENTS.confirmed).ok).toBe(false);
  });

  it('names the pending side effect with arguments from the dialog', () => {
    expect(pendingAction(inState('PendingCancellationConfirmation'))).toEqual({
      tool: 'cancel_appointment',
      appointmentId: 'apt_1',
    });
    expect(pendingAction(inState('PendingRescheduleConfirmation'))).toEqual({
      tool: 'reschedule_appointment',
      appointmentId: 'apt_1',
      slotId: 'slot_1',
    });
    expect(pendingAction(inState('PendingScheduleConfirmation'))).toEqual({
      tool: 'create_appointment',
      slotId: 'slot_1',
    });
    expect(pendingAction(inState('PendingEscalationConfirmation'))).toEqual({
      tool: 'escalate',
      reason: 'the visit is not at the address on file',
    });
    expect(pendingAction(inState('VerifiedIdle'))).toBeNull();
  });

  it('a correction picks again among what was offered, keeping the rest of the task', () => {
    const slot = transition(inState('PendingRescheduleConfirmation'), { type: 'slot_selected', id: 'slot_2' });
    expect(slot.ok && pendingAction(slot.dialog)).toEqual({
      tool: 'reschedule_appointment',
      appointmentId: 'apt_1',
      slotId: 'slot_2',
    });
    const appointment = transition(inState('PendingRescheduleConfirmation'), {
      type: 'appointment_selected',
      id: 'apt_2',
    });
    expect(appointment.ok && pendingAction(appointment.dialog)).toEqual({
      tool: 'reschedule_appointment',
      appointmentId: 'apt_2',
      slotId: 'slot_1',
    });
    const cancel = transition(
      { ...inState('PendingCancellationConfirmation'), presentedAppointmentIds: ['apt_1', 'apt_2'] },
      { type: 'appointment_selected', id: 'apt_2' },
    );
    expect(cancel.ok && pendingAction(cancel.dialog)).toEqual({ tool: 'cancel_appointment', appointmentId: 'apt_2' });
    const booking = transition(inState('PendingScheduleConfirmation'), { type: 'slot_selected', id: 'slot_2' });
    expect(booking.ok && pendingAction(booking.dialog)).toEqual({ tool: 'create_appointment', slotId: 'slot_2' });
    // Never something that was not offered.
    expect(transition(inState('PendingRescheduleConfirmation'), { type: 'slot_selected', id: 'slot_9' }).ok).toBe(
      false,
    );
  });

  it('an unclear request asks which of its candidates was meant; the task it interrupted waits, unchanged', () => {
    const asked = transition(inState('PresentingSlots'), EVENTS.intent_unclear);
    expect(asked.ok && asked.dialog).toMatchObject({
      state: 'DisambiguatingIntent',
      candidates: ['reschedule', 'cancel'],
      resume: 'PresentingSlots',
      presentedSlotIds: ['slot_1'],
      selectedAppointmentId: 'apt_1',
    });
    if (!asked.ok) throw new Error(asked.reason);
    // Nothing can be confirmed while the caller is asked what they meant.
    expect(pendingAction({ ...asked.dialog })).toBeNull();
    const neither = transition(asked.dialog, EVENTS.declined);
    expect(neither.ok && neither.dialog).toEqual({ ...inState('PresentingSlots') });
    const same = transition(asked.dialog, { type: 'intent_picked', intent: 'reschedule' });
    expect(same.ok && same.dialog).toEqual({ ...inState('PresentingSlots') });
    const other = transition(asked.dialog, EVENTS.intent_picked);
    expect(other.ok && other.dialog).toMatchObject({
      state: 'VerifiedIdle',
      purpose: null,
      presentedSlotIds: [],
      candidates: [],
      resume: null,
    });
    expect(transition(inState('VerifiedIdle'), { type: 'intent_unclear', candidates: ['cancel', 'cancel'] })).toEqual({
      ok: false,
      reason: 'intent_unclear: needs two or more different candidates',
    });
  });

  it(
    'before verification an unclear request is clarified, verification still possible, ' + 'the pick kept for after it',
    () => {
      const asked = transition(initialDialog(), EVENTS.intent_unclear);
      if (!asked.ok) throw new Error(asked.reason);
      expect(transition(asked.dialog, EVENTS.verified).ok).toBe(true);
      const failed = transition(asked.dialog, EVENTS.verification_failed);
      expect(failed.ok && failed.dialog).toMatchObject({
        state: 'CollectingVerification',
        zipAttempts: 1,
        candidates: [],
      });
      const picked = transition(asked.dialog, EVENTS.intent_picked);
      expect(picked.ok && picked.dialog).toMatchObject({ state: 'CollectingVerification', pendingIntent: 'billing' });
      // "Never mind" drops the request that waited for verification.
      const dropped = picked.ok ? transition(picked.dialog, EVENTS.declined) : undefined;
      expect(dropped?.ok && dropped.dialog).toMatchObject({ state: 'CollectingVerification', pendingIntent: null });
    },
  );
});
