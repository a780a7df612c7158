import type { Participant } from '../../core/domain.ts';

/** The enrollment details as the model reads them; null when there are none. */
export function participantBackground(participant: Participant | null): string | null {
  if (!participant) return null;
  const lines = [
    participant.name && `Name: ${participant.name}`,
    participant.gender && `Gender: ${participant.gender}`,
    participant.ethnicity && `Ethnicity: ${participant.ethnicity}`,
    participant.background && `Background: ${participant.background}`,
    participant.timezone && `Time zone: ${participant.timezone}`,
  ].filter(Boolean);
  return lines.length > 0 ? `Participant background:\n${lines.join('\n')}` : null;
}
