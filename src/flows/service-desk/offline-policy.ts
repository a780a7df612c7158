import type { LlmRequest } from '../../llm/llm-provider.ts';
import { markedRole, systemOf, type OfflineStep } from '../../llm/offline/offline-demo-provider.ts';
import { ROLE } from './desk-prompts.ts';

/**
 * The offline demo model's service-desk roles (decision 005), read from the role marker the
 * flow puts in its system message: a one-line acknowledgement, a keyword interpreter that
 * proposes one tool, and a narrator that words the facts it is given. Deterministic.
 */
export function offlineDeskStep(request: LlmRequest): OfflineStep | null {
  const system = systemOf(request);
  const role = markedRole(ROLE, system);
  if (!role) return null;
  const said = [...request.messages].reverse().find((message) => message.role === 'user')?.content ?? '';
  if (role === 'acknowledge') return { text: acknowledge(said), toolCalls: [] };
  if (role === 'narrate') return { text: narrate(system, said), toolCalls: [] };
  const offered = new Set((request.tools ?? []).map((tool) => tool.name));
  const call = decide(system, said, offered);
  return { text: '', toolCalls: call ? [call] : [] };
}

const has = (text: string, pattern: RegExp) => pattern.test(text.toLowerCase());

function acknowledge(said: string): string {
  if (has(said, /\b\d{5}\b/)) return 'One moment while I check that.';
  if (has(said, UNSUPPORTED)) return 'One moment.';
  if (has(said, /cancel/)) return "Okay, let's sort out that cancellation.";
  if (has(said, /reschedul|move|change/)) return "Sure, let's find you a new time.";
  if (has(said, /schedul|book|availab/)) return 'Happy to set up a visit.';
  if (has(said, /appointment/)) return 'Let me look into your appointments.';
  if (has(said, /bill|invoice|owe|pay/)) return 'Let me pull up your billing.';
  // Nothing recognised: no claim to have understood it.
  return 'One moment.';
}

function intentOf(said: string): string | null {
  if (has(said, /\b(human|person|agent|representative|someone)\b/)) return 'human';
  if (has(said, /cancel/)) return 'cancel';
  if (has(said, /reschedul|move my|move it|change my/)) return 'reschedule';
  // "book it" / "book that" answer a question about a window; they are no new request.
  if (has(said, /\bschedul|\bbook\b(?! (it|that|this)\b)|availab|new appointment|another appointment|new visit/))
    return 'schedule';
  if (has(said, /next appointment|when is my/)) return 'next_appointment';
  if (has(said, /appointments?/)) return 'list_appointments';
  if (has(said, /bill|invoice|owe|pay/)) return 'billing';
  return null;
}

const YES = /^(yes|yeah|yep|sure|ok|okay|please do|correct|that's right|confirm)\b/;
const NO = /^(no|nope|nah|don't|do not|not really|never ?mind|forget (it|that)|cancel that|none of (them|those))\b/;
/** A change of an earlier pick: "actually the other one", "no, Thursday", "make it the second instead". */
const CORRECTION = new RegExp(
  '^(actually|no,? (the|make it|thursday|monday|tuesday|wednesday|friday|saturday|sunday|' +
    'first|second|third|last|other))|\\binstead\\b|\\bthe other one\\b',
  'i',
);
/** Requests no tool carries out: said so, never taken for another request. */
const UNSUPPORTED = /\b(refund|reimburs|compensat|emergenc|urgent|asap|right away|right now|same[- ]day|complain)/;
/** A phone number as typed: digits with spaces, dashes, dots or brackets, an optional +. */
const PHONE = /(\+?\d[\d\s().-]{8,}\d)/;
/** Requests that could be more than one thing: the caller is asked which. */
const UNCLEAR = /\b(sort out|do something (about|with)|deal with|problem with|question about)\b.*\bappointment/;
/** Dropping the matter altogether, rather than a no to the question asked. */
const ABANDON = /^(never ?mind|forget (it|that)|cancel that|none of (them|those))\b/;
/** Words that point at the one option listed. */
const THAT_ONE = /\b(it|that|this|that one|this one|the one)\b/;
// "one" alone is not an ordinal: "the second one" must not read as the first.
const ORDINALS: Array<[RegExp, number]> = [
  [/\b(first|1st|1)\b/, 0],
  [/\b(second|2nd|two|2)\b/, 1],
  [/\b(third|3rd|three|3)\b/, 2],
  [/\b(fourth|4th|four|4)\b/, 3],
  [/\b(fifth|5th|five|5)\b/, 4],
];

const WEEKDAY = /\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/;

/** The option the caller points at. The only one listed only when they point at it or say yes: "no" is never a pick. */
function pick(system: string, said: string, kind: 'Appointment' | 'Window'): string | null {
  const options = [...system.matchAll(new RegExp(`^${kind} option \\d+: id (\\S+): (.+)$`, 'gm'))].map((m) => ({
    id: m[1]!,
    text: m[2]!.toLowerCase(),
  }));
  const ids = options.map((option) => option.id);
  const correcting = CORRECTION.test(said);
  if (has(said, NO) && !correcting) return null;
  // "The other one": of two options, the one not picked so far.
  const picked = new RegExp(`^Picked so far: ${kind === 'Window' ? 'window' : 'appointment'} (\\S+)\\.$`, 'm').exec(
    system,
  )?.[1];
  if (has(said, /\bother\b/) && picked && ids.length === 2) return ids.find((id) => id !== picked) ?? null;
  if (has(said, /\blast\b/)) return ids.at(-1) ?? null;
  for (const [pattern, index] of ORDINALS) if (has(said, pattern)) return ids[index] ?? null;
  const day = WEEKDAY.exec(said.toLowerCase())?.[1];
  if (day) {
    const matching = options.filter((option) => option.text.includes(day));
    if (matching.length === 1) return matching[0]!.id;
  }
  return ids.length === 1 && (has(said, YES) || has(said, THAT_ONE)) ? ids[0]! : null;
}

type Call = { name: string; arguments: Record<string, unknown> };

/** The demo's callers are American: a number without a country code is read as one. */
const asUsPhone = (phone: string) => (phone.startsWith('+') ? phone : `+1${phone.replace(/\D/g, '')}`);

function decide(system: string, said: string, offered: Set<string>): Call | null {
  const text = said.trim().toLowerCase();
  if (/address on file|my address|which address/.test(text) && offered.has('lookup_account'))
    return { name: 'lookup_account', arguments: {} };
  const policy = /polic|\bfee/.test(text) ? policyTopic(text) : null;
  if (policy) return { name: 'service_policy', arguments: { topic: policy } };
  if (offered.has('pick_intent')) {
    const candidates =
      /^The caller was asked which they meant: (.+)\. Their answer/m.exec(system)?.[1]?.split(', ') ?? [];
    const named = intentOf(text);
    const ordinal = ORDINALS.find(([pattern]) => pattern.test(text))?.[1];
    const chosen = named ?? (ordinal !== undefined ? candidates[ordinal] : undefined);
    if (chosen) return { name: 'pick_intent', arguments: { intent: chosen } };
    if (ABANDON.test(text) || /^(neither|none)\b/.test(text)) return { name: 'decline', arguments: {} };
  }
  if (UNCLEAR.test(text) && offered.has('clarify_intent'))
    return { name: 'clarify_intent', arguments: { candidates: ['reschedule', 'cancel', 'next_appointment'] } };
  // "Sure, reschedule it": the yes or no in front does not hide the request after it.
  const intent = intentOf(text.replace(YES, '').replace(NO, ''));
  if (intent === 'human') return { name: 'escalate', arguments: { reason: 'the caller asked for a person' } };
  // Another request than the task in progress is a change of mind: it is proposed, never a yes to the old question.
  const task = /^Task in progress: (\w+)\./m.exec(system)?.[1] ?? null;
  const changedMind = intent !== null && intent !== task && system.includes('Caller verified: yes');
  const answer = changedMind ? null : answerPending(system, text, offered);
  if (answer) return answer;
  // A ZIP code as said: five digits, or what followed the word "zip" (a wrong length is asked for again).
  const zip = /\b(\d{5})\b/.exec(said)?.[1] ?? /\bzip(?: code)?(?: is)?:? (\d{1,9})\b/i.exec(said)?.[1];
  // "Cancel it, it's urgent" is a cancellation; "a refund on my bill" is no look at the bill.
  const unsupported = (intent === null || intent === 'billing') && UNSUPPORTED.test(text);
  if (!zip && unsupported && offered.has('unsupported_request')) return { name: 'unsupported_request', arguments: {} };
  if (offered.has('confirm') && !changedMind) return null;
  if (zip && offered.has('verify_account')) {
    const phone =
      /(\+?\d[\d\s().-]{8,}\d)/.exec(said.replace(zip, ''))?.[1] ??
      /The caller's phone number is (\+\d+)/.exec(system)?.[1];
    return {
      name: 'verify_account',
      arguments: {
        zip,
        ...(phone ? { phone: asUsPhone(phone) } : {}),
        ...(intent ? { intent } : {}),
      },
    };
  }
  if (offered.has('note_intent') && intent) return { name: 'note_intent', arguments: { intent } };
  switch (intent) {
    case 'human':
      return { name: 'escalate', arguments: { reason: 'the caller asked for a person' } };
    case 'cancel':
    case 'reschedule':
      return { name: 'list_appointments', arguments: { purpose: intent } };
    case 'schedule':
      return offered.has('schedule_new_visit')
        ? { name: 'schedule_new_visit', arguments: {} }
        : { name: 'get_available_slots', arguments: {} };
    case 'next_appointment':
      return { name: 'list_appointments', arguments: { purpose: 'info', limit: 1 } };
    case 'list_appointments':
      return { name: 'list_appointments', arguments: { purpose: 'info' } };
    case 'billing':
      return { name: 'open_invoices', arguments: {} };
    default:
      return null;
  }
}

/**
 * The answer to what the dialog is waiting for: a number to be called back on, a yes or no, an
 * address confirmation, a pick from a list.
 */
function answerPending(system: string, text: string, offered: Set<string>): Call | null {
  // A phone number with a ZIP code is another try at verifying, not a number to call back.
  const callback = offered.has('callback_number') && !/\b\d{5}\b/.test(text) ? PHONE.exec(text)?.[1] : undefined;
  if (callback) return { name: 'callback_number', arguments: { phone: asUsPhone(callback) } };
  // A correction at a confirmation picks again; the question is then asked about the new pick.
  if (offered.has('confirm') && CORRECTION.test(text)) {
    const window = offered.has('select_slot') ? pick(system, text, 'Window') : null;
    if (window) return { name: 'select_slot', arguments: { slotId: window } };
    const appointment = offered.has('select_appointment') ? pick(system, text, 'Appointment') : null;
    if (appointment) return { name: 'select_appointment', arguments: { appointmentId: appointment } };
  }
  if (offered.has('confirm'))
    return YES.test(text)
      ? { name: 'confirm', arguments: { answer: 'yes' } }
      : NO.test(text)
        ? { name: 'confirm', arguments: { answer: 'no' } }
        : null;
  if (offered.has('decline') && (ABANDON.test(text) || (NO.test(text) && !offered.has('confirm_address'))))
    return { name: 'decline', arguments: {} };
  if (offered.has('confirm_address') && (YES.test(text) || NO.test(text)))
    return { name: 'confirm_address', arguments: { confirmed: YES.test(text) } };
  if (offered.has('select_slot')) {
    const id = pick(system, text, 'Window');
    if (id) return { name: 'select_slot', arguments: { slotId: id } };
  }
  if (offered.has('select_appointment')) {
    const id = pick(system, text, 'Appointment');
    if (id) return { name: 'select_appointment', arguments: { appointmentId: id } };
  }
  return null;
}

function policyTopic(text: string): string {
  if (/reschedul|move/.test(text)) return 'rescheduling';
  if (/bill|pay|invoice/.test(text)) return 'billing';
  if (/area|where/.test(text)) return 'service_area';
  if (/prepar|before/.test(text)) return 'preparation';
  return 'cancellation';
}

/** What a confirmation question is about, from the narrator's facts. */
interface Selected {
  appointment: string | null;
  window: string | null;
}

const PHRASES: Array<[RegExp, (match: RegExpExecArray, selected: Selected) => string]> = [
  [/^A caller has just connected/, () => 'Hi, thanks for contacting Acme Pest Control. How can I help you today?'],
  [
    /^Ask for the phone number and ZIP code/,
    () => "I can help with that. First, what's the phone number and 5-digit ZIP code on your account?",
  ],
  [
    /^Ask for the 5-digit ZIP code on the account to verify/,
    () => "I can help with that. First, what's the 5-digit ZIP code on your account?",
  ],
  [
    /^Before anything else, ask for the phone number and ZIP code/,
    () => "To help you, I first need to verify your account. What's the phone number and 5-digit ZIP code on it?",
  ],
  [
    /^Before anything else, ask for the 5-digit ZIP code/,
    () => "To help you, I first need to verify your account. What's the 5-digit ZIP code on it?",
  ],
  [
    /^Verification failed\. Ask again for the 5-digit ZIP code/,
    () =>
      "Sorry, I couldn't match that ZIP code. Could you check it and try again? If your account is under another " +
      'phone number, tell me that number too.',
  ],
  [/^The caller is verified as (.+)\.$/, (m) => `Thanks, ${m[1]}, you're verified.`],
  [
    /^Verification failed/,
    () => "Sorry, I couldn't match that phone number and ZIP code. Could you check them and try again?",
  ],
  [
    /^Ask for the phone number on the account, with the ZIP code/,
    () => 'Could you give me the phone number on the account, along with its 5-digit ZIP code?',
  ],
  [
    /^The caller could not be verified; offer .*, asking for the phone number/,
    () =>
      "I'm sorry, I couldn't verify those details. A member of our team can call you back: what phone number " +
      "should they call? If you'd rather not, just say no.",
  ],
  [
    /^The caller could not be verified; offer/,
    () =>
      "I'm sorry, I couldn't verify those details. I can have a member of our team call you back. Shall I do " +
      'that? Please answer yes or no.',
  ],
  [
    /^Ask the caller to confirm that a person from our team should call/,
    () => 'Shall I have a member of our team call you back? Please answer yes or no.',
  ],
  [
    /^A person from our team can call the caller back, but no phone number is known/,
    () => 'A member of our team can call you back. What phone number should they call?',
  ],
  [
    /^What the caller gave for a call back is not a phone number/,
    () => "Sorry, that doesn't look like a phone number. What number should our team call you back on?",
  ],
  [
    /^The caller asked for something this desk cannot do/,
    () => `I'm sorry, that's not something I can do here. ${CAN_DO}`,
  ],
  [
    /^The window the caller chose was taken meanwhile/,
    () => "I'm sorry, that window was taken in the meantime, so nothing was changed.",
  ],
  [
    /^The caller already has an appointment in the window they chose/,
    () => 'You already have an appointment at that time, so nothing was changed.',
  ],
  [
    /^The appointment is no longer scheduled/,
    () => "I couldn't change that appointment: it is no longer scheduled, so nothing was changed.",
  ],
  [/^That could not be done; nothing was changed\.$/, () => "I'm sorry, I couldn't do that, so nothing was changed."],
  [/^Ask which appointment to (\w+)\.$/, (m) => `Which appointment would you like to ${m[1]}?`],
  [/^Ask which window suits/, () => 'Which of these windows works for you?'],
  [
    /^Ask the caller to confirm cancelling/,
    (_, s) => `Shall I cancel your ${s.appointment ?? 'appointment'}? Please answer yes or no.`,
  ],
  [
    /^Ask the caller to confirm moving/,
    (_, s) =>
      `Shall I move your ${s.appointment ?? 'appointment'} to ${s.window ?? 'that window'}? Please answer yes or no.`,
  ],
  [
    /^Ask the caller to confirm booking/,
    (_, s) => `Shall I book a visit on ${s.window ?? 'that window'}? Please answer yes or no.`,
  ],
  [
    /^Ask the caller to pick one of the (\w+)/,
    (m) => `Which of the ${m[1]} I listed do you mean? You can say "the first one".`,
  ],
  [
    /^Before looking for windows, .*address on file: (.+)\.$/,
    (m) => `Is the visit for ${m[1]}? Please answer yes or no.`,
  ],
  [/^Done: (cancelled|moved|booked) (.+)\.$/, (m) => `Done, ${changed(m[1]!, m[2]!)}.`],
  [
    /^Done earlier, not yet told to the caller: (cancelled|moved|booked) (.+)\.$/,
    (m) => `Just so you know, ${changed(m[1]!, m[2]!, 'already ')}.`,
  ],
  [/^Nothing was changed/, () => "No problem, I've left everything as it was."],
  [/^The caller has no upcoming appointments/, () => "You don't have any upcoming appointments."],
  [/^There are no open windows/, () => "I'm sorry, there are no open windows in that range."],
  [
    /^A person will call back; the ticket number is (\S+)\.$/,
    (m) => `A member of our team will call you back. Your ticket number is ${m[1]}.`,
  ],
  [
    /^Done earlier, not yet told to the caller: A person will call back; the ticket number is (\S+)\.$/,
    (m) => `Just so you know, a member of our team will call you back. Your ticket number is ${m[1]}.`,
  ],
  [/^The caller does not want a person now/, () => 'All right. Is there anything else I can help you with?'],
  [/^The caller has no open invoices\.$/, () => 'You have no open invoices.'],
  [/^The caller has (\d+) (open invoices?): (.+)\.$/, (m) => `You have ${m[1]} ${m[2]}: ${m[3]}.`],
  [/^Our policy: (.+)$/, (m) => m[1]!],
  [/^Having answered that, go back/, () => 'Now, back to where we were.'],
  [
    /^What the caller picked is not one of the windows/,
    () => "That one isn't among the windows I have. Which of these works for you?",
  ],
  [
    /^What the caller picked is not one of their appointments listed: .* which one to (\w+)\.$/,
    (m) => `That isn't one of the appointments I listed. Which one would you like to ${m[1]}?`,
  ],
  [
    /^The request is unclear\. Ask whether the caller wants to (.+)\.$/,
    (m) => `Just to be sure, would you like to ${m[1]}?`,
  ],
  [
    /^The caller dropped their request/,
    () => "No problem, I've dropped that. Is there anything else I can help you with?",
  ],
  [
    /^The ZIP code the caller gave is not 5 digits/,
    () => 'A ZIP code has 5 digits. Could you give me the 5-digit ZIP code on your account?',
  ],
  [
    /^Ask for the 5-digit ZIP code on the account, which is needed/,
    () => "Thanks. And the account's 5-digit ZIP code?",
  ],
  [
    /^Ask for the phone number on the account again/,
    () => 'Could you give me the phone number on the account again, with the area code?',
  ],
  [/^That was done\.$/, () => 'Done.'],
  [
    /^We can only book at the address on file; .*, asking for the phone number/,
    () =>
      'I can only book at the address on file; a member of our team can call you back to change it. What phone ' +
      "number should they call? If you'd rather not, just say no.",
  ],
  [
    /^We can only book at the address on file/,
    () =>
      'I can only book at the address on file; a member of our team can call you back to change it. Shall I ' +
      'arrange that? Please answer yes or no.',
  ],
  [/^Ask what the caller would like to do/, () => 'What would you like to do next?'],
  [/^Ask the caller to clarify/, () => GENERIC],
  [
    /^The account is (.+), service address (.+)\.$/,
    (m) => `The account is in the name of ${m[1]}, and the service address on file is ${m[2]}.`,
  ],
];

/** What the desk can do, said to a caller who asked for something else (never that it was understood). */
const CAN_DO =
  'I can tell you about your appointments, book a new visit, move or cancel one, go over your bill, answer ' +
  'questions about our policies, or have a member of our team call you back.';

/** Nothing was done for the message: small talk is answered, anything else is not claimed as understood. */
function nothingDone(said: string): string {
  if (has(said.trim(), /^(hi|hello|hey|good (morning|afternoon|evening))\b/)) return 'Hello! How can I help you today?';
  if (has(said, /\b(thanks|thank you)\b/)) return "You're welcome. Is there anything else I can help you with?";
  return `I'm not sure what you'd like me to do. ${CAN_DO} What would you like to do?`;
}

function changed(change: string, what: string, already = ''): string {
  if (change === 'cancelled') return `I've ${already}cancelled your ${what}`;
  if (change === 'moved') return `I've ${already}moved your ${what}`;
  return `I've ${already}booked your ${what}`;
}

/**
 * What a fact this narrator does not know becomes: facts are instructions to the narrator, never
 * text for the caller.
 */
const GENERIC = "Sorry, I didn't quite follow. Could you tell me what you'd like to do?";

function narrate(system: string, said: string): string {
  const sentences: string[] = [];
  const selected = {
    appointment: /^Selected appointment: (.+)$/m.exec(system)?.[1] ?? null,
    window: /^Selected window: (.+)$/m.exec(system)?.[1] ?? null,
  };
  for (const [, fact] of system.matchAll(/^Fact: (.+)$/gm)) {
    const phrase = PHRASES.find(([pattern]) => pattern.test(fact!));
    const match = phrase && phrase[0].exec(fact!);
    const sentence = /^Nothing was done or looked up/.test(fact!)
      ? nothingDone(said)
      : phrase && match
        ? phrase[1](match, selected)
        : GENERIC;
    if (!sentences.includes(sentence)) sentences.push(sentence);
  }
  const appointments = [...system.matchAll(/^Appointment (\d+): (.+)$/gm)].map(([, n, text]) => `${n}. ${text}`);
  const windows = [...system.matchAll(/^Window (\d+): (.+)$/gm)].map(([, n, text]) => `${n}. ${text}`);
  const lists = [
    ...(appointments.length
      ? [
          appointments.length === 1
            ? `Your appointment: ${appointments[0]!.slice(3)}.`
            : `Your upcoming appointments:\n${appointments.join('\n')}`,
        ]
      : []),
    ...(windows.length ? [`Open windows:\n${windows.join('\n')}`] : []),
  ];
  // Lists before the question that closes them.
  const questions = sentences.filter((s) => s.endsWith('?'));
  const statements = sentences.filter((s) => !s.endsWith('?'));
  return [...statements, ...lists, ...questions].join('\n') || 'How can I help you today?';
}
