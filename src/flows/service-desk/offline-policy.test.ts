import { describe, expect, it } from 'vitest';
import type { Appointment, Slot } from './crm.ts';
import { choicesFor } from './gate.ts';
import type { DeskTurnEnv } from './desk-turn.ts';
import { deskFormat } from './desk-format.ts';
import { initialDialog, type Dialog } from './dialog.ts';
import { offlineDeskStep } from './offline-policy.ts';
import { ASK_CALLBACK, decisionPrompt, NOT_A_PHONE, REFUSED_CHANGE, UNSUPPORTED } from './desk-prompts.ts';

// The offline interpreter reads what the flow's decision prompt says, as a real model would.
const appointment: Appointment = {
  id: 'apt_sam_1',
  customerId: 'cus_sam',
  service: 'Ant treatment',
  date: '2026-06-03',
  windowStart: '08:00',
  windowEnd: '10:00',
  status: 'scheduled',
  address: '5 W 30th St',
  notes: null,
};
const slot: Slot = { id: 'slot_20260602_0900', date: '2026-06-02', windowStart: '09:00', windowEnd: '11:00' };

function decide(dialog: Dialog, said: string, presented: { appointments?: Appointment[]; slots?: Slot[] } = {}) {
  const env = {
    dialog,
    callerPhone: null,
    format: deskFormat('en-US', 'America/Los_Angeles'),
    presented: { appointments: presented.appointments ?? [], slots: presented.slots ?? [] },
  } as unknown as DeskTurnEnv;
  const tools = choicesFor(dialog).map((name) => ({ name, description: '', parameters: {} }));
  const step = offlineDeskStep({ messages: decisionPrompt(env, [{ role: 'user', content: said }]), tools });
  return step?.toolCalls[0] ?? null;
}

const verified = (patch: Partial<Dialog>): Dialog => ({ ...initialDialog(), customerId: 'cus_sam', ...patch });
const oneAppointment = verified({
  state: 'PresentingAppointments',
  purpose: 'cancel',
  presentedAppointmentIds: ['apt_sam_1'],
});
const oneSlot = verified({ state: 'PresentingSlots', purpose: 'schedule', presentedSlotIds: [slot.id] });

describe('offline desk policy: picking and declining', () => {
  it('"no" and its kin decline a list of one; they never pick its only option', () => {
    for (const said of [
      'no',
      'No, never mind',
      'never mind',
      'nevermind',
      'cancel that',
      'forget it',
      'nope, none of those',
    ]) {
      expect(decide(oneAppointment, said, { appointments: [appointment] }), said).toMatchObject({ name: 'decline' });
      expect(decide(oneSlot, said, { slots: [slot] }), said).toMatchObject({ name: 'decline' });
    }
  });

  it('the only option is picked when the caller points at it or says yes', () => {
    for (const said of ['yes', 'that one', 'the first one', 'cancel it']) {
      expect(decide(oneAppointment, said, { appointments: [appointment] }), said).toMatchObject({
        name: 'select_appointment',
        arguments: { appointmentId: 'apt_sam_1' },
      });
    }
    expect(decide(oneAppointment, 'hmm, what?', { appointments: [appointment] })).toBeNull();
  });

  it('at the address question a "no" rejects the address and "never mind" drops the booking', () => {
    const details = verified({ state: 'PendingScheduleDetails', purpose: 'schedule' });
    expect(decide(details, 'no')).toMatchObject({ name: 'confirm_address', arguments: { confirmed: false } });
    expect(decide(details, 'never mind')).toMatchObject({ name: 'decline' });
  });
});

describe('offline desk policy: what the desk cannot do, and a number to call back', () => {
  it('names a refund or an emergency as something the desk cannot do, never as another request', () => {
    for (const said of ['I want a refund', 'refund my last bill', "Please send a technician today, it's an emergency"])
      expect(decide(verified({ state: 'VerifiedIdle' }), said), said).toMatchObject({ name: 'unsupported_request' });
    expect(decide(initialDialog(), 'I want a refund')).toMatchObject({ name: 'unsupported_request' });
    expect(decide(verified({ state: 'VerifiedIdle' }), "cancel my appointment, it's urgent")).toMatchObject({
      name: 'list_appointments',
      arguments: { purpose: 'cancel' },
    });
    // A yes stays a yes, whatever follows it.
    const confirming = verified({
      state: 'PendingCancellationConfirmation',
      purpose: 'cancel',
      selectedAppointmentId: 'apt_sam_1',
      presentedAppointmentIds: ['apt_sam_1'],
    });
    expect(decide(confirming, "yes, it's urgent", { appointments: [appointment] })).toMatchObject({
      name: 'confirm',
      arguments: { answer: 'yes' },
    });
  });

  it('reads a number to call back when a person is offered; a phone with a ZIP is another try at verifying', () => {
    const offered = { ...initialDialog(), state: 'PendingEscalationConfirmation' as const, zipAttempts: 3 };
    expect(decide(offered, 'sure, call me on (415) 555-0199')).toMatchObject({
      name: 'callback_number',
      arguments: { phone: '+14155550199' },
    });
    expect(decide(offered, '415-555-0100 and 94107')).toBeNull();
    expect(decide(offered, 'yes')).toMatchObject({ name: 'confirm', arguments: { answer: 'yes' } });
  });
});

describe('offline desk policy: narration', () => {
  const narrate = (...facts: string[]) =>
    offlineDeskStep({
      messages: [
        { role: 'system', content: ['[service-desk:narrate]', ...facts.map((fact) => `Fact: ${fact}`)].join('\n') },
      ],
    })!.text;

  it('a fact it has no wording for gets a safe generic one, never the fact itself', () => {
    const reply = narrate(
      'Ask the caller to reconsider (internal: slot_selected: not valid in PresentingAppointments).',
      'Something new the code says.',
    );
    expect(reply).toBe("Sorry, I didn't quite follow. Could you tell me what you'd like to do?");
  });

  it('says that a refused change changed nothing, in words of its own, never the generic sentence', () => {
    const generic = /didn't quite follow/;
    for (const [fact, said] of [
      [REFUSED_CHANGE.taken, /that window was taken in the meantime, so nothing was changed/],
      [REFUSED_CHANGE.overlaps, /You already have an appointment at that time, so nothing was changed/],
      [REFUSED_CHANGE.notScheduled, /it is no longer scheduled, so nothing was changed/],
      [REFUSED_CHANGE.other, /I couldn't do that, so nothing was changed/],
      [UNSUPPORTED, /not something I can do here\. I can tell you about your appointments/],
      [ASK_CALLBACK, /What phone number should they call\?/],
      [NOT_A_PHONE, /doesn't look like a phone number/],
    ] as const) {
      const reply = narrate(fact);
      expect(reply, fact).toMatch(said);
      expect(reply, fact).not.toMatch(generic);
    }
  });
});
