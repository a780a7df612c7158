import { describe, expect, it } from 'vitest';
import { initialDialog, MAX_ZIP_ATTEMPTS, type Dialog } from './dialog.ts';
import { choicesFor, gate } from './gate.ts';

const verified: Dialog = { ...initialDialog(), state: 'VerifiedIdle', customerId: 'cus_alex' };
const tool = (name: string, args: unknown) => ({ kind: 'tool' as const, name, arguments: args });

describe('policy gate', () => {
  it('lets through a valid, allowed tool with its parsed arguments (defaults applied)', () => {
    expect(gate(verified, tool('list_appointments', {}))).toMatchObject({
      decision: 'run',
      input: { limit: 3, purpose: 'info' },
    });
    expect(gate(initialDialog(), tool('verify_account', { zip: '94107', phone: '+14155550100' }))).toMatchObject({
      decision: 'run',
    });
    expect(gate(initialDialog(), tool('service_policy', { topic: 'billing' }))).toMatchObject({ decision: 'run' });
    expect(gate(verified, { kind: 'answer' })).toEqual({ decision: 'answer' });
  });

  it('refuses customer tools before verification, keeping the intent behind them', () => {
    expect(gate(initialDialog(), tool('list_appointments', {}))).toMatchObject({
      decision: 'refuse',
      code: 'not_verified',
      intent: 'list_appointments',
    });
    expect(gate(initialDialog(), tool('open_invoices', {}))).toMatchObject({
      decision: 'refuse',
      code: 'not_verified',
      intent: 'billing',
    });
  });

  it("never runs a side effect from a proposal, even for the caller's own appointment", () => {
    for (const [name, args, intent] of [
      ['cancel_appointment', { appointmentId: 'apt_alex_1' }, 'cancel'],
      ['cancel_appointment', { appointmentId: 'apt_jordan_1' }, 'cancel'], // someone else's
      ['reschedule_appointment', { appointmentId: 'apt_alex_1', slotId: 'slot_1' }, 'reschedule'],
      ['create_appointment', { slotId: 'slot_1' }, 'schedule'],
    ] as const) {
      expect(gate(verified, tool(name, args))).toMatchObject({
        decision: 'refuse',
        code: 'needs_confirmation',
        intent,
      });
      expect(
        gate(
          { ...verified, state: 'PendingCancellationConfirmation', selectedAppointmentId: 'apt_alex_1' },
          tool(name, args),
        ),
      ).toMatchObject({ decision: 'refuse', code: 'needs_confirmation' });
    }
  });

  it('refuses verification once the conversation used up its attempts', () => {
    const locked = { ...initialDialog(), zipAttempts: MAX_ZIP_ATTEMPTS };
    expect(gate(locked, tool('verify_account', { zip: '94107', phone: '+14155550100' }))).toMatchObject({
      decision: 'refuse',
      code: 'verification_locked',
    });
    expect(
      gate(
        { ...initialDialog(), zipAttempts: MAX_ZIP_ATTEMPTS - 1 },
        tool('verify_account', { zip: '94107', phone: '+14155550100' }),
      ),
    ).toMatchObject({ decision: 'run' });
  });

  it('refuses invalid arguments with the field named, and unknown tools', () => {
    expect(gate(initialDialog(), tool('verify_account', { zip: '9410' }))).toEqual({
      decision: 'refuse',
      code: 'invalid_arguments',
      reason: 'verify_account: zip: must be exactly 5 digits',
      invalid: { name: 'verify_account', fields: [{ path: 'zip', missing: false }] },
    });
    expect(gate(initialDialog(), tool('verify_account', { phone: '4155550100' }))).toMatchObject({
      code: 'invalid_arguments',
      invalid: { fields: [{ path: 'zip', missing: true }] },
    });
    // As models pass a ZIP code: a number, spoken, ZIP+4.
    for (const zip of [94107, 'nine four one oh seven', '94107-1234'])
      expect(gate(initialDialog(), tool('verify_account', { zip }))).toMatchObject({
        decision: 'run',
        input: { zip: '94107' },
      });
    expect(gate(verified, tool('list_appointments', { limit: 99 }))).toMatchObject({
      decision: 'refuse',
      code: 'invalid_arguments',
      reason: expect.stringContaining('limit'),
    });
    expect(gate(verified, tool('delete_account', {}))).toMatchObject({ decision: 'refuse', code: 'unknown_action' });
    expect(gate(verified, tool('verify_account', { zip: '94107' }))).toMatchObject({
      decision: 'refuse',
      code: 'not_offered',
    });
  });

  it(
    'lets a verified caller start something else from any state: a new visit is offered wherever a yes or a ' +
      'choice is awaited',
    () => {
      for (const state of [
        'PresentingAppointments',
        'PresentingSlots',
        'PendingCancellationConfirmation',
        'PendingRescheduleConfirmation',
        'PendingScheduleDetails',
        'PendingScheduleConfirmation',
      ] as const) {
        expect(gate({ ...verified, state }, tool('schedule_new_visit', {}))).toMatchObject({
          decision: 'choice',
          choice: 'schedule_new_visit',
        });
        expect(gate({ ...verified, state }, tool('list_appointments', { purpose: 'cancel' }))).toMatchObject({
          decision: 'run',
        });
      }
      expect(choicesFor(initialDialog())).toEqual(['note_intent', 'clarify_intent', 'unsupported_request']);
      expect(choicesFor({ ...initialDialog(), pendingIntent: 'billing' })).toEqual([
        'decline',
        'note_intent',
        'clarify_intent',
        'unsupported_request',
      ]);
      expect(choicesFor({ ...initialDialog(), state: 'PendingEscalationConfirmation' })).toEqual([
        'confirm',
        'callback_number',
        'decline',
        'note_intent',
        'clarify_intent',
        'unsupported_request',
      ]);
    },
  );

  it('offers a decline wherever something waits for an answer', () => {
    for (const state of [
      'PresentingAppointments',
      'PresentingSlots',
      'PendingScheduleDetails',
      'PendingCancellationConfirmation',
      'PendingRescheduleConfirmation',
      'PendingScheduleConfirmation',
      'DisambiguatingIntent',
    ] as const) {
      expect(gate({ ...verified, state }, tool('decline', {}))).toEqual({
        decision: 'choice',
        choice: 'decline',
        input: {},
      });
    }
    expect(gate(verified, tool('decline', {}))).toMatchObject({ decision: 'refuse', code: 'not_offered' });
  });

  it('accepts only the choices the current state offers', () => {
    // A confirmation takes a yes or no, a correction of the pick, and "cancel that".
    expect(choicesFor({ ...verified, state: 'PendingCancellationConfirmation' })).toEqual([
      'confirm',
      'select_appointment',
      'decline',
      'schedule_new_visit',
      'clarify_intent',
      'unsupported_request',
    ]);
    expect(choicesFor({ ...verified, state: 'PendingRescheduleConfirmation' })).toEqual([
      'confirm',
      'select_slot',
      'select_appointment',
      'decline',
      'schedule_new_visit',
      'clarify_intent',
      'unsupported_request',
    ]);
    expect(choicesFor({ ...verified, state: 'DisambiguatingIntent' })).toEqual([
      'pick_intent',
      'decline',
      'schedule_new_visit',
      'clarify_intent',
      'unsupported_request',
    ]);
    expect(choicesFor(verified)).toEqual(['schedule_new_visit', 'clarify_intent', 'unsupported_request']);
    // A person offered takes a yes or no, or the number to call back.
    expect(choicesFor({ ...verified, state: 'PendingEscalationConfirmation' })).toEqual([
      'confirm',
      'callback_number',
      'decline',
      'schedule_new_visit',
      'clarify_intent',
      'unsupported_request',
    ]);
    expect(gate({ ...verified, state: 'PendingCancellationConfirmation' }, tool('confirm', { answer: 'yes' }))).toEqual(
      { decision: 'choice', choice: 'confirm', input: { answer: 'yes' } },
    );
    expect(gate(verified, tool('confirm', { answer: 'yes' }))).toMatchObject({
      decision: 'refuse',
      code: 'not_offered',
    });
    expect(gate({ ...verified, state: 'PresentingSlots' }, tool('select_slot', { slotId: 5 }))).toMatchObject({
      decision: 'refuse',
      code: 'invalid_arguments',
    });
    expect(
      gate({ ...verified, state: 'PresentingAppointments' }, tool('select_appointment', { appointmentId: 'apt_x' })),
    ).toMatchObject({ decision: 'choice', choice: 'select_appointment' });
  });
});
