import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';

export interface HabitPrompts {
  intake: string;
  feedback: string;
  generator: string;
}

const shipped = (name: string) => new URL(`./prompts/${name}`, import.meta.url);

/**
 * The system prompts, from the override files when given (a study team edits those), else the
 * shipped ones. A missing or unreadable override falls back to the shipped prompt with a warning.
 */
export function loadHabitPrompts(
  overrides: { intake?: string; feedback?: string; generator?: string },
  logger: Pick<Logger, 'warn'>,
): HabitPrompts {
  const load = (override: string | undefined, name: string): string => {
    if (override) {
      try {
        return readFileSync(override, 'utf8').trim();
      } catch (error) {
        logger.warn({ file: override, err: (error as Error).message }, 'prompt file not readable; using the shipped prompt');
      }
    }
    return readFileSync(shipped(name), 'utf8').trim();
  };
  return {
    intake: load(overrides.intake, 'intake_bot_system.txt'),
    feedback: load(overrides.feedback, 'feedback_tracker_system.txt'),
    generator: load(overrides.generator, 'prompt_generator_system.txt'),
  };
}
