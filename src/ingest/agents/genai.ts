/**
 * OpenTelemetry GenAI semantic-convention spans, from any service:
 * `gen_ai.operation.name` `execute_tool` → tool call; `chat`,
 * `generate_content`, `text_completion` → model call; other operations
 * (`invoke_agent`, `embeddings`, …) are ignored. The session is
 * `gen_ai.conversation.id`. Deprecated names are accepted beside the current
 * ones (`gen_ai.system`, `gen_ai.tool.call_id`, `gen_ai.usage.prompt_tokens`…).
 * Durations are the span's start to end; identities use the span's name.
 */

import { agentMapper, spanFailure } from "./_map.ts";
import { agentSpec, type ModelCallSpec } from "./_spec.ts";

const PROVIDER = ["gen_ai.provider.name", "gen_ai.system"];
const MODEL = ["gen_ai.request.model", "gen_ai.response.model"];

/**
 * Semconv input tokens include cached ones: `input − cache_read` (never below
 * 0), the cached count going to `cacheReadTokens` (docs/design.md §6.2 "Token counts").
 * Output tokens already include reasoning tokens.
 */
const inference: ModelCallSpec = {
  kind: "model_call",
  provider: PROVIDER,
  model: MODEL,
  requestId: ["gen_ai.response.id"],
  inputTokens: ["gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"],
  inputIncludesCache: true,
  outputTokens: ["gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"],
  cacheReadTokens: [
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
  ],
  cacheCreationTokens: [
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
  ],
  duration: "span",
};

/** GenAI spans, by `gen_ai.operation.name`. */
export const genAiSpec = agentSpec({
  signal: "traces",
  eventName: { attribute: "gen_ai.operation.name" },
  sessionKey: "gen_ai.conversation.id",
  toolNameKey: ["gen_ai.tool.name"],
  agentVersionFallback: ["gen_ai.agent.version"],
}, {
  "execute_tool": {
    kind: "tool_call",
    // `gen_ai.tool.type` is function/extension/datastore, never MCP; an MCP
    // `tools/call` span says so with `mcp.method.name`.
    toolType: { present: ["mcp.method.name"] },
    callId: ["gen_ai.tool.call.id", "gen_ai.tool.call_id"],
    arguments: ["gen_ai.tool.call.arguments"],
    model: MODEL,
    agentName: ["gen_ai.agent.name"],
    providerName: PROVIDER,
    toolDescription: ["gen_ai.tool.description"],
    result: ["gen_ai.tool.call.result"],
    duration: "span",
    failure: spanFailure,
  },
  "chat": inference,
  "generate_content": inference,
  "text_completion": inference,
});

/** Maps one span that carries `gen_ai.operation.name`. */
export const mapGenAiSpan = agentMapper(genAiSpec);
