import {
  file,
  idColumns,
  iso,
  type ExportFile,
  type ExportSource,
  type OfParticipant,
  type Subject,
} from './export-columns.ts';
import { profileHistory, type ProfileChange, type ToneChange } from './profile-history.ts';
import { TONE_TAGS } from './tone.ts';

type ChangeRow = OfParticipant<ProfileChange & { conversationId: string }>;
type ToneRow = OfParticipant<ToneChange & { conversationId: string }>;

/** Both files replay the same history (profile-history.ts), read once per participant and file. */
async function replay({ participant, conversation }: Subject, { store }: ExportSource) {
  if (!conversation) return { changes: [], tone: [], ids: undefined };
  const replayed = profileHistory(
    await store.listTurns(conversation.id),
    await store.listToolCalls(conversation.id),
    await store.listMessages(conversation.id),
  );
  return { ...replayed, ids: { participantId: participant.id, conversationId: conversation.id } };
}
const tagList = `JSON array of tone tags: ${TONE_TAGS.join(', ')}`;

/** Each change of a profile field, and each tone update, with when and what caused it. */
export const profileFiles: readonly ExportFile[] = [
  file<ChangeRow>(
    'profile_changes.csv',
    async (subject, source) => {
      const { changes, ids } = await replay(subject, source);
      return changes.map((change) => ({ ...change, ...ids! }));
    },
    [
      { ...idColumns.participant, value: (c) => c.participantId },
      { ...idColumns.conversation, value: (c) => c.conversationId },
      { name: 'changed_at', type: 'datetime', meaning: 'When the field changed (UTC)', value: (c) => iso(c.at) },
      {
        name: 'field',
        type: 'string',
        meaning: 'The profile field (habit_domain, preferred_time, ..., intensity)',
        value: (c) => c.field,
      },
      {
        name: 'old_value',
        type: 'string',
        meaning: 'Its value before; empty when it had none (intensity starts at normal)',
        personal: true,
        value: (c) => c.oldValue,
      },
      { name: 'new_value', type: 'string', meaning: 'Its value after', personal: true, value: (c) => c.newValue },
      {
        name: 'source',
        type: 'enum',
        meaning: "What changed it: the coach's save_user_profile tool, or an answer to the intensity poll",
        values: ['save_user_profile', 'intensity_poll'],
        value: (c) => c.source,
      },
      {
        name: 'source_id',
        type: 'string',
        meaning: 'The tool call (joins tool_calls.csv) or the answering message (joins messages.csv)',
        value: (c) => c.sourceId,
      },
    ],
    (c) => c.at,
  ),
  file<ToneRow>(
    'tone.csv',
    async (subject, source) => {
      const { tone, ids } = await replay(subject, source);
      return tone.map((update) => ({ ...update, ...ids! }));
    },
    [
      { ...idColumns.participant, value: (t) => t.participantId },
      { ...idColumns.conversation, value: (t) => t.conversationId },
      { name: 'changed_at', type: 'datetime', meaning: 'When the tone changed (UTC)', value: (t) => iso(t.at) },
      {
        name: 'source',
        type: 'enum',
        meaning: 'explicit (the participant asked) or implicit (the coach inferred it)',
        values: ['explicit', 'implicit'],
        value: (t) => t.source,
      },
      {
        name: 'proposed_tags',
        type: 'json',
        meaning: `The tags observed; ${tagList}`,
        value: (t) => JSON.stringify(t.proposed),
      },
      {
        name: 'active_tags',
        type: 'json',
        meaning: 'The tags that shape replies after the update (JSON array)',
        value: (t) => JSON.stringify(t.active),
      },
      {
        name: 'scores',
        type: 'json',
        meaning: "Every observed tag's score after the update, 0-1 (JSON object)",
        value: (t) => JSON.stringify(t.scores),
      },
      {
        name: 'tool_call_id',
        type: 'string',
        meaning: 'The save_user_profile call (joins tool_calls.csv)',
        value: (t) => t.toolCallId,
      },
    ],
    (t) => t.at,
  ),
];
