import type { FlowModule } from '../flow-module.ts';
import { ASSISTANT_FLOW, createAssistantFlow } from './assistant-flow.ts';
import { loadMcpConfig, McpTools } from './mcp-tools.ts';
import { loadProfiles, SHIPPED_PROFILES_DIR } from './profiles.ts';
import { offlineAssistantStep } from './offline-policy.ts';
import { createOpenAiEmbedder } from '../../llm/embeddings.ts';
import type { QueryContext } from '../../store/query-context.ts';
import { approvalRoutes } from './approval-routes.ts';
import { APPROVAL_TRIGGER } from './approval-turn.ts';
import { owesResume, readApprovals } from './approvals.ts';

/** Connect and call timeout of MCP servers. */
const MCP_TIMEOUT_MS = 30_000;

/** Spec 003's assistant: profiles, recall, the agentic loop, MCP tools (decision 006). */
export const assistantModule: FlowModule = {
  id: ASSISTANT_FLOW,
  offlinePolicy: offlineAssistantStep,
  load(config, logger) {
    const settings = config.assistant;
    const profiles = loadProfiles(settings.profilesDir ?? SHIPPED_PROFILES_DIR, settings.defaultProfile);
    const mcpServers = settings.mcpConfigFile ? loadMcpConfig(settings.mcpConfigFile) : [];
    // Recall by meaning on the same endpoint as the model (configuration refuses it without one).
    const { embeddingModel, baseUrl, apiKey } = config.llm;
    const semantic =
      embeddingModel && baseUrl
        ? {
            embedder: createOpenAiEmbedder({ baseUrl, apiKey, model: embeddingModel }),
            minSimilarity: settings.recallMinSimilarity,
            timeoutMs: settings.helperTimeoutMs,
          }
        : undefined;
    return {
      async start({ clock, ids, store }) {
        const mcp =
          mcpServers.length > 0 ? new McpTools({ servers: mcpServers, logger, timeoutMs: MCP_TIMEOUT_MS }) : undefined;
        await mcp?.start();
        const flow = createAssistantFlow({
          ...settings,
          mcp,
          profiles,
          clock,
          ids,
          recallLimit: settings.recallMaxResults,
          semantic,
          helperModel: config.llm.interpreterModel,
        });
        const paused = store.extend(pausedConversations);
        return {
          flow,
          routes: (app, host) => approvalRoutes(app, host, { store, clock, flow: ASSISTANT_FLOW }),
          owedTurns: async () =>
            (await paused.ops.owingResume()).map((conversationId) => ({
              conversationId,
              input: { kind: 'event' as const, trigger: APPROVAL_TRIGGER, hint: '' },
            })),
          stop: async () => mcp?.close(),
        };
      },
    };
  },
};

/** Assistant conversations whose approvals are all decided but whose reply has not resumed (decision 022). */
function pausedConversations(ctx: QueryContext) {
  return {
    async owingResume(): Promise<string[]> {
      const rows = await ctx.db
        .selectFrom('flow_states')
        .innerJoin('conversations', 'conversations.id', 'flow_states.conversation_id')
        .select(['flow_states.conversation_id as id', 'flow_states.data as data'])
        .where('conversations.flow', '=', ASSISTANT_FLOW)
        .where('flow_states.data', 'like', '%"pause":{%')
        .execute();
      return rows.filter((row) => owesResume(readApprovals(JSON.parse(row.data)))).map((row) => row.id);
    },
  };
}
