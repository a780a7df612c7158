import { z } from 'zod';
import { defineTool } from '../../../tools/define-tool.ts';
import { setSubState, type HabitTurnState } from '../habit-turn-state.ts';

export const transitionStateInput = z.object({
  target_state: z.enum(['INTAKE', 'FEEDBACK']).describe('The module the next turns go to.'),
  delay_minutes: z
    .number()
    .gt(0)
    .max(7 * 24 * 60)
    .optional()
    .describe('Wait this many minutes first (fractions allowed: 0.5 is 30 seconds). Omit to switch now.'),
  reason: z.string().max(500).optional().describe('Why, for the audit log.'),
});

/** Moves the conversation between intake and feedback, now or after a delay. */
export function transitionStateTool(state: HabitTurnState) {
  return defineTool({
    name: 'transition_state',
    description:
      'Move the conversation to INTAKE (build or repair the profile) or FEEDBACK (follow up on habit prompts), ' +
      'now or after delay_minutes. A new delayed transition replaces a pending one; an immediate one cancels it.',
    input: transitionStateInput,
    execute: ({ target_state, delay_minutes }) => {
      if (delay_minutes === undefined) {
        const from = state.subState;
        setSubState(state, target_state);
        state.notes.push(`transition_state: ${from} → ${target_state}`);
        return from === target_state
          ? `The conversation was already in ${target_state}; any pending delayed transition is cancelled.`
          : `Moved from ${from} to ${target_state}. The next message is handled by ${target_state}.`;
      }
      const dueAt = new Date(state.startedAt.getTime() + Math.round(delay_minutes * 60_000));
      const replaced = state.delayedTransition ? ' It replaces the transition that was pending.' : '';
      state.delayedTransition = { target: target_state, dueAt };
      state.notes.push(`transition_state: ${target_state} at ${dueAt.toISOString()}`);
      return (
        `The conversation will move to ${target_state} in ${delay_minutes} minute(s), at ${dueAt.toISOString()}.` +
        `${replaced} Until then it stays in ${state.subState}.`
      );
    },
  });
}
