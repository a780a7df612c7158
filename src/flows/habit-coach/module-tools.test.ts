import { describe, expect, it } from 'vitest';
import { MODULE_TOOLS } from './habit-coach-flow.ts';
import { loadHabitPrompts } from './prompt-files.ts';

// BEHAVIOR-NOTES "Modules and tools": a module's tool list and its prompt must agree (the
// original's feedback prompt asked for generate_habit_prompt and its tool list lacked it).
const HABIT_TOOL_NAMES = ['save_user_profile', 'scheduler', 'generate_habit_prompt', 'transition_state'];
const shipped = loadHabitPrompts({});

describe('module tools and shipped prompts', () => {
  it.each([
    ['INTAKE', shipped.intake],
    ['FEEDBACK', shipped.feedback],
  ] as const)('the %s prompt names exactly the tools the module is given', (module, prompt) => {
    const named = HABIT_TOOL_NAMES.filter((name) => prompt.includes(name));
    expect(named.toSorted()).toEqual(MODULE_TOOLS[module].toSorted());
  });
});

describe('prompt override files', () => {
  it('stop start-up when one cannot be read or is empty, naming the variable and the path', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const empty = join(mkdtempSync(join(tmpdir(), 'prompts-')), 'empty.txt');
    writeFileSync(empty, '  \n');
    expect(() => loadHabitPrompts({ intake: '/nonexistent/intake.txt', generator: empty })).toThrow(
      'INTAKE_BOT_PROMPT_FILE: cannot read "/nonexistent/intake.txt" (ENOENT)\nPROMPT_GENERATOR_PROMPT_FILE: "' +
        empty +
        '" is empty',
    );
  });
});
