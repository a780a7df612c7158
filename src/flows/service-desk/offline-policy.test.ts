import { describe, expect, it } from 'vitest';
import type { Appointment, Slot } from './crm.ts';
import { choicesFor } from './gate.ts';
import { decisionPrompt } from './desk-prompts.ts';
import type { DeskTurnEnv } from './desk-turn.ts';
import { deskFormat } from './desk-format.ts';
import { initialDialog, type Dialog } from './dialog.ts';
import { offlineDeskStep } from './offline-policy.ts';

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
});
