import type { Message } from '../../core/domain.ts';
import { pollAnswers, promptOutcomes, type PollAnswer, type PromptOutcome } from './adherence.ts';
import {
  file,
  idColumns,
  iso,
  localIso,
  ofConversation,
  type ExportFile,
  type OfParticipant,
} from './export-columns.ts';
import { DONE_OPTIONS, GO_DONE_OPTIONS } from './polls.ts';

type PromptRow = OfParticipant<PromptOutcome & { conversationId: string; zone: string | null; dueAt: Date | null }>;
type AnswerRow = OfParticipant<PollAnswer & { conversationId: string }>;

const flag = (value: boolean) => (value ? 1 : 0);
const answeredAt = (outcome: PromptOutcome) => outcome.answer?.answer.createdAt ?? null;

/** The daily prompts and every poll answer, read from the transcript as the coach read them (adherence.ts). */
export const adherenceFiles: readonly ExportFile[] = [
  file<PromptRow>(
    'prompts.csv',
    ofConversation(async (conversation, { store, study }, { participant }) => {
      const due = await study.promptTimers(conversation.id);
      return promptOutcomes(await store.listMessages(conversation.id)).map((outcome) => ({
        ...outcome,
        participantId: participant.id,
        conversationId: conversation.id,
        zone: participant.timezone,
        dueAt: due.get(outcome.sentAt.getTime()) ?? null,
      }));
    }),
    [
      { ...idColumns.participant, value: (p) => p.participantId },
      { ...idColumns.conversation, value: (p) => p.conversationId },
      {
        name: 'poll_message_id',
        type: 'string',
        meaning: 'The prompt\'s "Did you do it?" poll (joins messages.csv and poll_answers.csv)',
        value: (p) => p.poll.id,
      },
      {
        name: 'prompt_message_id',
        type: 'string',
        meaning: "The prompt's text message (joins messages.csv)",
        value: (p) => p.prompt?.id ?? null,
      },
      {
        name: 'scheduled_local',
        type: 'datetime',
        meaning:
          "When the prompt was due, in the participant's zone with its offset (the schedule's time less " +
          'SCHEDULER_PREP_TIME_MINUTES); empty when the timer is no longer known',
        value: (p) => localIso(p.dueAt, p.zone),
      },
      { name: 'sent_at', type: 'datetime', meaning: 'When it was sent (ISO 8601, UTC)', value: (p) => iso(p.sentAt) },
      {
        name: 'sent_local',
        type: 'datetime',
        meaning: "When it was sent, in the participant's zone with its offset",
        value: (p) => localIso(p.sentAt, p.zone),
      },
      {
        name: 'text',
        type: 'string',
        meaning: 'The prompt as sent',
        personal: true,
        value: (p) => p.prompt?.text ?? null,
      },
      {
        name: 'replied',
        type: 'integer',
        meaning: '1 when the participant wrote within 24 h of the prompt and before the next one, else 0',
        value: (p) => flag(p.repliedAt !== null),
      },
      {
        name: 'replied_at',
        type: 'datetime',
        meaning: 'Their first such message (UTC)',
        value: (p) => iso(p.repliedAt),
      },
      {
        name: 'answer',
        type: 'enum',
        meaning:
          "What they picked in the poll; empty when unanswered. Next time: the Go PromptPipe's option for " +
          'Not yet, in a study imported from it',
        values: [...new Set([...DONE_OPTIONS, ...GO_DONE_OPTIONS])],
        value: (p) => p.answer?.option ?? null,
      },
      { name: 'answered_at', type: 'datetime', meaning: 'When they picked it (UTC)', value: (p) => iso(answeredAt(p)) },
      { name: 'done', type: 'integer', meaning: '1 when the answer was Done, else 0', value: (p) => flag(p.done) },
    ],
    (p) => p.sentAt,
  ),
  file<AnswerRow>(
    'poll_answers.csv',
    ofConversation(async (conversation, { store }, { participant }) =>
      pollAnswers(await store.listMessages(conversation.id)).map((answer) => ({
        ...answer,
        participantId: participant.id,
        conversationId: conversation.id,
      })),
    ),
    [
      { ...idColumns.participant, value: (a) => a.participantId },
      { ...idColumns.conversation, value: (a) => a.conversationId },
      { name: 'poll_message_id', type: 'string', meaning: 'The poll (joins messages.csv)', value: (a) => a.poll.id },
      { name: 'question', type: 'string', meaning: "The poll's question", value: (a) => questionOf(a.poll) },
      {
        name: 'poll_sent_at',
        type: 'datetime',
        meaning: 'When the poll was sent (UTC)',
        value: (a) => iso(a.poll.createdAt),
      },
      { name: 'option', type: 'string', meaning: 'The option the reply picked', value: (a) => a.option },
      {
        name: 'option_number',
        type: 'integer',
        meaning: 'Its number as the participant saw it (numbers run across the polls sent together)',
        value: (a) => a.number,
      },
      {
        name: 'answer_message_id',
        type: 'string',
        meaning: 'The reply (joins messages.csv)',
        value: (a) => a.answer.id,
      },
      {
        name: 'answered_at',
        type: 'datetime',
        meaning: 'When the reply came (UTC)',
        value: (a) => iso(a.answer.createdAt),
      },
      {
        name: 'answer_text',
        type: 'string',
        meaning: 'The reply as written ("1", "done", "more", ...)',
        personal: true,
        value: (a) => a.answer.text,
      },
    ],
    (a) => a.answer.createdAt,
  ),
];

const questionOf = (poll: Message) => poll.poll?.question ?? poll.text;
