import type { Appointment, Slot } from './crm.ts';
import type { LlmMessage } from '../../llm/llm-provider.ts';
import type { Dialog, DialogState, EscalationReason, Intent } from './dialog.ts';
import type { DeskTurnEnv } from './desk-turn.ts';
import type { DeskFormat } from './desk-format.ts';

/** What the narrator speaks from: tool results and the code's instructions, never the model's own guesses. */
export interface Facts {
  userText: string;
  notes: string[];
  appointments: Appointment[];
  slots: Slot[];
  /** What a confirmation question is about, so the question names it. */
  selected: { appointment: Appointment | null; slot: Slot | null };
}

/** The question each confirmation state asks; the narrator names the selected items from the facts. */
export const CONFIRM_QUESTIONS: Partial<Record<DialogState, string>> = {
  PendingCancellationConfirmation: 'Ask the caller to confirm cancelling the selected appointment (yes or no).',
  PendingRescheduleConfirmation:
    'Ask the caller to confirm moving the selected appointment to the selected window (yes or no).',
  PendingScheduleConfirmation: 'Ask the caller to confirm booking a visit in the selected window (yes or no).',
};

/** A person was asked for (or a yes given to one) and there is no number to call back: the caller is asked for it. */
export const ASK_CALLBACK =
  'A person from our team can call the caller back, but no phone number is known: ask for the number to call.';
export const NOT_A_PHONE =
  'What the caller gave for a call back is not a phone number: ask again for the number our team should call.';

/**
 * How a person is offered, by why: a person calls back, so without a number known to call
 * (`unknown`) the caller is asked for one, and nothing is promised until a ticket carries it.
 */
export const OFFER_PERSON: Record<EscalationReason, { known: string; unknown: string }> = {
  address_change: {
    known:
      'We can only book at the address on file; offer to have a person from our team call the caller back to ' +
      'change it (yes or no).',
    unknown:
      'We can only book at the address on file; offer to have a person from our team call the caller back to ' +
      'change it, asking for the phone number to call (none is known), or no.',
  },
  verification_failed: {
    known: 'The caller could not be verified; offer to have a person from our team call them back (yes or no).',
    unknown:
      'The caller could not be verified; offer to have a person from our team call them back, asking for the ' +
      'phone number to call (none is known), or no.',
  },
  requested: {
    known: 'Ask the caller to confirm that a person from our team should call them back (yes or no).',
    unknown: ASK_CALLBACK,
  },
};

/** What the desk can do, for a caller who asked for something else. */
const CAN_DO =
  'tell them about their appointments, book a new visit, move or cancel one, go over their bill, answer ' +
  'questions about our policies, or have a person from our team call them back';
/** A request no tool carries out (a refund, a same-day visit): said so, never taken for another. */
export const UNSUPPORTED =
  'The caller asked for something this desk cannot do: say plainly that it cannot be done here (never that it ' +
  `will be, nor that you understood more than that), and that you can ${CAN_DO}.`;
/** A turn in which nothing was proposed, looked up or done, and no question is pending. */
export const NOTHING_DONE =
  'Nothing was done or looked up for this message: do not say it was understood or will be done. Answer ' +
  `small talk briefly; otherwise say you are not sure what they would like, that you can ${CAN_DO}, and ask ` +
  'what they would like.';

/**
 * A confirmed change the CRM refused (another conversation got there first): nothing changed, and
 * the caller hears so.
 */
export const REFUSED_CHANGE = {
  taken: 'The window the caller chose was taken meanwhile, so nothing was booked or moved; nothing was changed.',
  overlaps:
    'The caller already has an appointment in the window they chose, so nothing was booked or moved; nothing ' +
    'was changed.',
  notScheduled:
    'The appointment is no longer scheduled (it was cancelled or changed meanwhile), so it could not be changed; ' +
    'nothing was changed.',
  other: 'That could not be done; nothing was changed.',
};

/** Role markers: the offline demo policy reads them to know which role it plays. */
export const ROLE = {
  acknowledge: '[service-desk:acknowledge]',
  decide: '[service-desk:decide]',
  narrate: '[service-desk:narrate]',
} as const;

const VOICE =
  "You are the friendly voice of Acme Pest Control's service desk. Write plain conversational text only: no " +
  'JSON, no markdown, no internal ids. Be brief (at most three sentences unless listing options).';

/** What each intent is, in the caller's words, for a clarification ("… or cancel an appointment"). */
export const INTENT_PHRASES: Record<Intent, string> = {
  next_appointment: 'hear when the next appointment is',
  list_appointments: 'go over the upcoming appointments',
  cancel: 'cancel an appointment',
  reschedule: 'move an appointment to another time',
  schedule: 'book a new visit',
  billing: 'check the bill',
  policy: 'ask about our policies',
  human: 'speak with a person',
  other: 'do something else',
};

/** How people repair a conversation (Rasa CALM's patterns), told to the interpreter in every state. */
const REPAIR = [
  'A correction of an earlier pick ("actually the other one", "no, Thursday") is a new select_appointment or ' +
    'select_slot among the options listed.',
  'A question asked in passing (a policy, a bill, when an appointment is) gets its tool; what is pending is asked ' +
    'again afterwards.',
  '"Cancel that", "never mind", "forget it" drop what is pending: decline (but "yes, cancel it" answers a ' +
    'cancellation question).',
  'A request that could mean two or three different things: clarify_intent naming them; do not guess.',
  'Pass what the caller said as they said it (a phone number in any format, a ZIP code as given).',
];
/** An appointment by what, when and where: "Termite inspection on Thursday, June 18, 1:00–3:00 PM at …". */
export const describeAppointment = (a: Appointment, format: DeskFormat) =>
  `${describeVisit(a, format)} at ${a.address}`;
/** A window as the caller is told it (`DESK_LOCALE`): "Tuesday, June 2, 9:00–11:00 AM". */
export const describeSlot = (s: Pick<Slot, 'date' | 'windowStart' | 'windowEnd'>, format: DeskFormat) =>
  format.when(s.date, s.windowStart, s.windowEnd);
/** An appointment by what and when, without the address (the caller knows where they live). */
export const describeVisit = (a: Appointment, format: DeskFormat) => `${a.service} on ${describeSlot(a, format)}`;

export type Done = NonNullable<Dialog['untold']>;
/** The fact of a change carried out: in this turn, or in an earlier one whose reply the caller never got. */
export function doneNote(done: Done, earlier = false): string {
  const prefix = earlier ? 'Done earlier, not yet told to the caller: ' : '';
  if (done.change === 'escalated') return `${prefix}A person will call back; the ticket number is ${done.what}.`;
  return `${prefix || 'Done: '}${done.change} ${done.what}.`;
}

export function acknowledgePrompt(_env: DeskTurnEnv, history: LlmMessage[]): LlmMessage[] {
  return [
    {
      role: 'system',
      content:
        `${ROLE.acknowledge}\n${VOICE}\nAcknowledge the caller's latest message in one short sentence (under 12 ` +
        'words). Do not answer it, ask anything, promise an outcome or say you understood it: tools are still ' +
        'running.',
    },
    ...history,
  ];
}

export function decisionPrompt(env: DeskTurnEnv, history: LlmMessage[]): LlmMessage[] {
  const { dialog } = env;
  const lines = [
    ROLE.decide,
    "You are the interpreter of a pest-control service desk. Read the caller's latest message and call exactly " +
      'one tool that captures it, or call none if it needs only an answer.',
    'Only pick ids from the lists below. Never invent ids. Scheduling a new visit is not rescheduling.',
    `State: ${dialog.state}. Caller verified: ${dialog.customerId ? 'yes' : 'no'}.`,
    env.callerPhone
      ? `The caller's phone number is ${env.callerPhone}: verify_account needs only the ZIP code (pass a phone ` +
        'only if the caller gives another one).'
      : 'The caller has not given a phone number yet.',
    dialog.pendingIntent ? `Stated before verification: ${dialog.pendingIntent}.` : '',
    // A different request is a change of mind: its tool starts the new path, and a yes confirms only the task
    // in progress.
    dialog.purpose
      ? `Task in progress: ${dialog.purpose}. If the caller now asks for something else, propose that instead of ` +
        'answering the pending question.'
      : '',
    ...env.presented.appointments.map(
      (a, i) => `Appointment option ${i + 1}: id ${a.id}: ${describeAppointment(a, env.format)}`,
    ),
    ...env.presented.slots.map((s, i) => `Window option ${i + 1}: id ${s.id}: ${describeSlot(s, env.format)}`),
    dialog.selectedAppointmentId ? `Picked so far: appointment ${dialog.selectedAppointmentId}.` : '',
    dialog.selectedSlotId ? `Picked so far: window ${dialog.selectedSlotId}.` : '',
    dialog.state === 'DisambiguatingIntent'
      ? `The caller was asked which they meant: ${dialog.candidates.join(', ')}. Their answer is a pick_intent.`
      : '',
    ...REPAIR,
  ];
  return [{ role: 'system', content: lines.filter(Boolean).join('\n') }, ...history];
}

export function narratorPrompt(facts: Facts, format: DeskFormat, history: LlmMessage[]): LlmMessage[] {
  const lines = [
    ROLE.narrate,
    VOICE,
    'You have already acknowledged the request; continue from there without greeting again. Say what the facts ' +
      'below say, and ask what they say to ask.',
    ...facts.notes.map((note) => `Fact: ${note}`),
    ...facts.appointments.map((a, i) => `Appointment ${i + 1}: ${describeAppointment(a, format)}`),
    ...facts.slots.map((s, i) => `Window ${i + 1}: ${describeSlot(s, format)}`),
    facts.selected.appointment ? `Selected appointment: ${describeVisit(facts.selected.appointment, format)}` : '',
    facts.selected.slot ? `Selected window: ${describeSlot(facts.selected.slot, format)}` : '',
  ].filter(Boolean);
  if (facts.notes.length === 0 && facts.appointments.length === 0 && facts.slots.length === 0)
    lines.push(`Fact: ${NOTHING_DONE}`);
  return [{ role: 'system', content: lines.join('\n') }, ...history];
}
