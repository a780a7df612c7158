import { describe, expect, it } from 'vitest';
import { MODULE_TOOLS } from './habit-coach-flow.ts';
import { loadHabitPrompts } from './prompt-files.ts';

// BEHAVIOR-NOTES "Modules and tools": a module's tool list and its prompt must agree (the
// original's feedback prompt asked for generate_habit_prompt and its tool list lacked it).
const HABIT_TOOL_NAMES = ['save_user_profile', 'scheduler', 'generate_habit_prompt', 'transition_state'];
const shipped = loadHabitPrompts({}, { warn: () => undefined });

describe('module tools and shipped prompts', () => {
  it.each([
    ['INTAKE', shipped.intake],
    ['FEEDBACK', shipped.feedback],
  ] as const)('the %s prompt names exactly the tools the module is given', (module, prompt) => {
    const named = HABIT_TOOL_NAMES.filter((name) => prompt.includes(name));
    expect(named.toSorted()).toEqual(MODULE_TOOLS[module].toSorted());
  });
});
