/** Small recognisers the offline demo model uses to read a participant's answers. */

const DOMAINS: Array<[RegExp, string]> = [
  [/\b(walk|walking|steps)\b/i, 'walking'],
  [/\b(run|running|jog|jogging)\b/i, 'running'],
  [/\b(sleep|bed ?time|rest)\b/i, 'sleep'],
  [/\b(water|hydrat\w*|drink)\b/i, 'hydration'],
  [/\b(stretch\w*|yoga|mobility)\b/i, 'stretching'],
  [/\b(meditat\w*|mindful\w*|breath\w*)\b/i, 'meditation'],
  [/\b(read|reading|books?)\b/i, 'reading'],
  [/\b(journal\w*|writ\w*)\b/i, 'journaling'],
  [/\b(vegetables?|veggies|fruit|eat\w*|diet|snack\w*)\b/i, 'healthy eating'],
  [/\b(exercise|workout|gym|push-?ups?|strength)\b/i, 'exercise'],
];

export function findDomain(text: string): string | null {
  return DOMAINS.find(([pattern]) => pattern.test(text))?.[1] ?? null;
}

/** A clock time in the text, as HH:MM: "7am", "7:30 pm", "19:00", "at 8". */
export function findClockTime(text: string): string | null {
  const match = /\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?(?=\W|$)/i.exec(text);
  if (!match) return null;
  let hour = Number(match[1]);
  const minute = Number(match[2] ?? 0);
  const meridiem = match[3]?.toLowerCase().replaceAll('.', '');
  if (!meridiem && match[2] === undefined && !/\bat\s+\d/i.test(text)) return null;
  if (meridiem === 'pm' && hour < 12) hour += 12;
  if (meridiem === 'am' && hour === 12) hour = 0;
  if (hour > 23 || minute > 59) return null;
  return `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`;
}

const PARTS_OF_DAY: Array<[RegExp, string]> = [
  [/\b(breakfast|morning|wake|waking|coffee)\b/i, '08:00'],
  [/\b(lunch|noon|midday)\b/i, '12:30'],
  [/\b(afternoon)\b/i, '15:00'],
  [/\b(dinner|supper|evening)\b/i, '19:00'],
  [/\b(night|bed)\b/i, '21:30'],
];

/** A time of day for scheduling: an explicit clock time, else one implied by a part of the day. */
export function impliedClockTime(text: string): string | null {
  return findClockTime(text) ?? PARTS_OF_DAY.find(([pattern]) => pattern.test(text))?.[1] ?? null;
}

const CHANGE_REQUEST =
  /\b(move|change|switch|shift|reschedul\w*|make it|rather|prefer|instead of|(?:can|could) (?:we|you|i))\b/i;

/** Whether the text asks to change something: "move it to 6pm", "can we do after dinner". */
export function asksForChange(text: string): boolean {
  return CHANGE_REQUEST.test(text);
}

/**
 * The new time of day for the daily prompt a message asks for, as HH:MM: a bare time ("6pm",
 * "at 7"), or a change request naming one ("move it to after dinner" is 19:00; in "from 7am to
 * 8am" the time after "to" counts). Null when it asks for none: a report such as "I did it at
 * 7am" or "missed it, too busy at 6pm" names a time without asking for it.
 */
export function requestedTime(text: string): string | null {
  if (asksForChange(text)) {
    const target = /\bto\s+(.+)$/i.exec(text)?.[1];
    return (target ? impliedClockTime(target) : null) ?? impliedClockTime(text);
  }
  if (isAffirmative(text) || isNegative(text)) return null;
  return findClockTime(text);
}

/** An anchor routine: "after breakfast", "before bed", "when I get home". */
export function findAnchor(text: string): string | null {
  const match = /\b((?:right )?(?:after|before|when|once|while)\b[^.,!?;]{2,60})/i.exec(text);
  return match ? match[1]!.trim().replace(/^right /i, '') : null;
}

export function isAffirmative(text: string): boolean {
  return /\b(done|did it|yes|yep|yeah|i did|completed|finished|went well|nailed)\b/i.test(text);
}

export function isNegative(text: string): boolean {
  return /\b(no|not yet|didn'?t|did not|skipped|missed|couldn'?t|forgot|failed)\b/i.test(text);
}
