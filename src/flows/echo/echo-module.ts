import type { Flow, PreparedTurn, TurnRequest } from '../../engine/flow.ts';
import type { ToolLoopResult } from '../../engine/tool-loop.ts';
import type { FlowModule } from '../flow-module.ts';

export const ECHO_FLOW = 'echo';
const GREETING = 'Echo here: send me anything and I will send it back.';

/**
 * The smallest flow: it answers each message with its own text and calls no model. It is the
 * example of a flow module (this folder and one line in the registry) and a way to check a
 * channel end to end without a model.
 */
export const echoModule: FlowModule = {
  id: ECHO_FLOW,
  load: () => ({ start: async () => ({ flow: echoFlow }) }),
};

const echoFlow: Flow = {
  id: ECHO_FLOW,
  initialState: () => ({ state: 'ECHOING', subState: null }),
  subStates: [],
  needsParticipant: false,
  greetingHint: () => GREETING,
  prepareTurn: async (request) => echoTurn(request),
};

function echoTurn({ input }: TurnRequest): PreparedTurn {
  const text = input.kind === 'message' ? `echo: ${input.text}` : GREETING;
  return {
    module: 'echo',
    systemMessages: [],
    tools: [],
    fallbackText: text,
    run: async () => reply(text),
    finish: () => ({}),
    commit: async () => undefined,
  };
}

function reply(text: string): ToolLoopResult {
  return {
    text,
    endedBy: 'reply',
    toolCalls: [],
    modelCalls: 0,
    toolRounds: 0,
    modelMs: 0,
    toolMs: 0,
    model: ECHO_FLOW,
  };
}
