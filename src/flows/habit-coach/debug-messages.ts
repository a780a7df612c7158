import type { ExtraMessage } from '../../engine/flow.ts';
import type { HabitTurnState, SubState } from './habit-turn-state.ts';

export const DEBUG_PREFIX = '[debug]';

/** What debug mode sends after a reply: the module, the profile in brief, and what the tools did. */
export function debugMessages(state: HabitTurnState, module: SubState): ExtraMessage[] {
  const { profile } = state;
  const fields =
    Object.entries(profile.fields)
      .map(([name, value]) => `${name}=${value}`)
      .join('; ') || 'empty';
  const lines = [
    `${DEBUG_PREFIX} module ${module}${state.subState !== module ? ` → next: ${state.subState}` : ''}`,
    `profile: ${fields}`,
    `intensity ${profile.intensity}, prompts ${profile.totalPrompts}, done ${profile.successCount}, ` +
      `tone: ${profile.tone.active.join(', ') || 'none'}`,
    `tools: ${state.notes.join(' | ') || 'none'}`,
  ];
  return [{ kind: 'text', text: lines.join('\n'), visibleToModel: false }];
}
