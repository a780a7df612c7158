import { readFileSync } from 'node:fs';
import { ConfigError } from '../../config/config.ts';

export interface HabitPrompts {
  intake: string;
  feedback: string;
  generator: string;
}

const shipped = (name: string) => new URL(`./prompts/${name}`, import.meta.url);

/**
 * The system prompts, from the override files when given (a study team edits those), else the
 * shipped ones. An override that cannot be read (or is empty) stops start-up, naming its variable
 * and path: falling back to the shipped prompt would change a study's protocol without a word.
 */
export function loadHabitPrompts(overrides: { intake?: string; feedback?: string; generator?: string }): HabitPrompts {
  const problems: string[] = [];
  const load = (override: string | undefined, variable: string, name: string): string => {
    if (!override) return readFileSync(shipped(name), 'utf8').trim();
    try {
      const text = readFileSync(override, 'utf8').trim();
      if (text) return text;
      problems.push(`${variable}: ${JSON.stringify(override)} is empty`);
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      problems.push(`${variable}: cannot read ${JSON.stringify(override)} (${reason})`);
    }
    return '';
  };
  const prompts = {
    intake: load(overrides.intake, 'INTAKE_BOT_PROMPT_FILE', 'intake_bot_system.txt'),
    feedback: load(overrides.feedback, 'FEEDBACK_TRACKER_PROMPT_FILE', 'feedback_tracker_system.txt'),
    generator: load(overrides.generator, 'PROMPT_GENERATOR_PROMPT_FILE', 'prompt_generator_system.txt'),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return prompts;
}
