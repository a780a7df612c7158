/**
 * The "turn" workload's model, the same for every system: first two tool calls
 * (`save_user_profile` with a small object, `scheduler` list), then a ~40-word reply.
 */
export const PROFILE_ARGS = {
  habit_domain: 'walking',
  motivational_frame: 'more energy for my kids',
  preferred_time: '07:30',
};
export const SCHEDULER_ARGS = { action: 'list' };
export const REPLY =
  'Thanks for telling me that. I saved your habit details and checked your schedule, so tomorrow morning you ' +
  'will get a short, friendly prompt right after breakfast. Reply done when you have walked, or tell me what ' +
  'got in the way.';

/**
 * Which step of the turn a model call is: tool calls when the last message is the user's, the reply after tool
 * results.
 */
export const wantsTools = (lastRole: string) => lastRole === 'user';
