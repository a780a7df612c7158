import { z } from 'zod';
import type { Clock } from '../../core/clock.ts';
import { canonicalTimeZone, isValidTimeZone } from '../../core/time-zone.ts';
import type { Message } from '../../core/domain.ts';
import { defineTool, toolError, type AnyTool } from '../../tools/define-tool.ts';
import { evaluate, formatNumber } from './calculator.ts';
import type { NotesDraft } from './notes-draft.ts';
import type { BuiltInToolName } from './profiles.ts';
import { formatRecalled, recallToolInput, toRecallQuery, type RecallQuery } from './recall.ts';

export interface AssistantToolContext {
  /** The person's memory (their conversations; by text, and by meaning when configured). */
  recall(query: RecallQuery, text: string, signal: AbortSignal): Promise<Message[]>;
  clock: Clock;
  notes: NotesDraft;
}

const timeZone = z.string().refine(isValidTimeZone, 'an IANA time zone such as Europe/Berlin');

/** The built-in tools, useful offline (spec 003 / issue #10), keyed by the names profiles allow. */
export function assistantTools(context: AssistantToolContext): Record<BuiltInToolName, AnyTool> {
  return {
    recall_conversation: defineTool({
      name: 'recall_conversation',
      description:
        'Search the earlier conversations with this user (all of theirs) by keywords, ' +
        'optionally between two UTC date-times.',
      input: recallToolInput,
      async execute(input, { signal }) {
        const query = toRecallQuery(input);
        const found = await context.recall(query, query.keywords.join(' '), signal);
        return found.length > 0 ? formatRecalled(found) : 'No earlier messages match.';
      },
    }),
    current_time: defineTool({
      name: 'current_time',
      description: 'The current date and time, in UTC or in a given IANA time zone.',
      input: z.object({ timeZone: timeZone.optional() }),
      execute: ({ timeZone: zone }) => describeTime(context.clock.now(), (zone && canonicalTimeZone(zone)) ?? 'UTC'),
    }),
    calculator: defineTool({
      name: 'calculator',
      description:
        'Evaluates an arithmetic expression: + - * / % ^, parentheses, sqrt, abs, round, floor, ceil, ln, ' +
        'log10, sin, cos, tan, min, max, pow, pi, e.',
      input: z.object({ expression: z.string().min(1).max(500) }),
      execute: ({ expression }) => {
        const result = evaluate(expression);
        return result.ok
          ? `${expression} = ${formatNumber(result.value)}`
          : toolError(`cannot evaluate "${expression}": ${result.error}`);
      },
    }),
    add_note: defineTool({
      name: 'add_note',
      description: 'Keeps a note for the user (a reminder, a fact to remember), in every conversation with them.',
      input: z.object({ text: z.string().trim().min(1).max(1000) }),
      execute: ({ text }) => `Saved note ${context.notes.add(text).id}.`,
    }),
    list_notes: defineTool({
      name: 'list_notes',
      description: "Lists the user's notes, oldest first, with their ids.",
      input: z.object({}),
      execute: () => {
        const notes = context.notes.list();
        return notes.length === 0
          ? 'No notes yet.'
          : notes.map((note) => `${note.id} (${note.createdAt.toISOString().slice(0, 10)}): ${note.text}`).join('\n');
      },
    }),
    delete_note: defineTool({
      name: 'delete_note',
      description: "Deletes one of the user's notes by its id (from list_notes).",
      input: z.object({ id: z.string().min(1).max(100) }),
      describeCall: ({ id }) => {
        const note = context.notes.list().find((candidate) => candidate.id === id);
        return note ? `delete your note "${clip(note.text)}"` : null;
      },
      execute: ({ id }) =>
        context.notes.delete(id)
          ? `Deleted note ${id}.`
          : toolError(`there is no note with id "${id}"; call list_notes for the ids`),
    }),
  };
}

const clip = (text: string) => (text.length > 120 ? `${text.slice(0, 117)}…` : text);

/** "Monday, November 23, 2026 at 11:53 UTC": the weekday helps a model with "next Friday". */
export function describeTime(at: Date, zone: string): string {
  const date = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    weekday: 'long',
    year: 'numeric',
    month: 'long',
    day: 'numeric',
  }).format(at);
  const time = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(at);
  return `${date} at ${time} ${zone === 'UTC' ? 'UTC' : `(${zone})`}`;
}
