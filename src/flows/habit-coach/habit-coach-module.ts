import type { FlowModule } from '../flow-module.ts';
import { createHabitCoachFlow, HABIT_COACH_FLOW } from './habit-coach-flow.ts';
import { loadHabitPrompts } from './prompt-files.ts';
import { habitTimerKinds } from './timers/habit-timer-kinds.ts';
import { offlineHabitPolicy } from './offline-policy.ts';
import { studyQueries } from './study-queries.ts';
import { coachingQueries } from './coaching-queries.ts';
import { studyRoutes } from './study-routes.ts';

/** The habit coach (specs 000–002): intake, daily prompts, feedback; the only flow with timers today. */
export const habitCoachModule: FlowModule = {
  id: HABIT_COACH_FLOW,
  offlinePolicy: offlineHabitPolicy,
  load(config) {
    const prompts = loadHabitPrompts(config.habit.promptFiles);
    return {
      async start(host) {
        const { provider, ids, clock, random } = host;
        const flow = createHabitCoachFlow({
          queries: host.store.extend(coachingQueries).ops,
          prompts,
          provider,
          ids,
          clock,
          random,
          prepMinutes: config.habit.prepMinutes,
          debug: config.conversation.debug,
        });
        const study = host.store.extend(studyQueries);
        return {
          flow,
          routes: (app) =>
            studyRoutes(app, { clock, store: host.store, queries: study.ops, timeZone: config.study.timeZone }),
          timerKinds: ({ store, outgoing, logger: log }) =>
            habitTimerKinds({
              store,
              ids,
              outgoing,
              clock,
              logger: log,
              provider,
              generatorPrompt: prompts.generator,
              random,
              delays: config.habit.delays,
            }),
        };
      },
    };
  },
};
