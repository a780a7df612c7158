/**
 * The opt-out keywords carriers and Twilio honour on SMS, matched on the whole message (trimmed,
 * any case, trailing punctuation ignored). Twilio itself confirms STOP and START to the person.
 */
const STOP = new Set(['stop', 'stopall', 'unsubscribe', 'cancel', 'end', 'quit', 'optout', 'revoke']);
const START = new Set(['start', 'unstop', 'yes']);
const HELP = new Set(['help', 'info']);

export type SmsKeyword = 'stop' | 'start' | 'help';

export function smsKeyword(text: string): SmsKeyword | null {
  const word = text
    .trim()
    .toLowerCase()
    .replace(/[.!?]+$/, '');
  if (STOP.has(word)) return 'stop';
  if (START.has(word)) return 'start';
  if (HELP.has(word)) return 'help';
  return null;
}
