// A generator for the Go platform routes' `type: "custom"` prompts (POST /send and POST /schedule):
// PLATFORM_CUSTOM_GENERATOR=docs/examples/custom-prompt-generator.mjs. The Go PromptPipe ran a
// generator registered in code for them; port yours into a module like this one.
//
// This one is a small state machine, as the Go server's first custom flow was: `state` picks the
// message, `body` (optional) is added to it. Replace the texts with your study's.

const MESSAGES = {
  initial: 'Hi! Time for your daily check-in.',
  feeling: 'How are you feeling right now, from 1 (low) to 5 (great)?',
  reflection: 'What went well today, even something small?',
};

/**
 * Called before anything is sent or scheduled: return {field, message} to refuse the request
 * (a 400 naming that field), or nothing to accept it. `prompt` has the request's fields (`state`,
 * `body`, `system_prompt`, `user_prompt`, `branch_options`, those given) and `to` (E.164).
 */
export function check(prompt) {
  const state = prompt.state ?? 'initial';
  if (!(state in MESSAGES)) return { field: 'state', message: `must be one of ${Object.keys(MESSAGES).join(', ')}` };
  if (prompt.body !== undefined && prompt.body.length > 1000)
    return { field: 'body', message: 'is over 1000 characters' };
  return undefined;
}

/**
 * The text to send, now (POST /send) or at each firing of a series (POST /schedule). `context`
 * has `participantId`, `scheduleId` (a series), `now` and `signal` (aborted after 30 s or at
 * shutdown). A throw, an empty text or one over 4,096 bytes sends nothing: POST /send answers 500
 * `custom_generator_failed`; a series retries that send, then skips it.
 */
export function generate(prompt) {
  const opening = MESSAGES[prompt.state ?? 'initial'];
  return prompt.body ? `${opening}\n\n${prompt.body}` : opening;
}
