import { assistantModule } from './assistant/assistant-module.ts';
import { echoModule } from './echo/echo-module.ts';
import type { FlowModule } from './flow-module.ts';
import { habitCoachModule } from './habit-coach/habit-coach-module.ts';
import { serviceDeskModule } from './service-desk/service-desk-module.ts';

/** Every flow the server runs; the first is the default for new participants. */
export const FLOW_MODULES: readonly FlowModule[] = [habitCoachModule, serviceDeskModule, assistantModule, echoModule];
