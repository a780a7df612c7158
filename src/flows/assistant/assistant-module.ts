import type { FlowModule } from '../flow-module.ts';
import { ASSISTANT_FLOW, createAssistantFlow } from './assistant-flow.ts';
import { loadMcpConfig, McpTools } from './mcp-tools.ts';
import { loadProfiles, SHIPPED_PROFILES_DIR } from './profiles.ts';
import { offlineAssistantStep } from './offline-policy.ts';
import { createOpenAiEmbedder } from '../../llm/embeddings.ts';

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
      async start({ clock, ids }) {
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
        return { flow, stop: async () => mcp?.close() };
      },
    };
  },
};
