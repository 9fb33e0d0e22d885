/**
 * Claude Code (`service.name` `claude-code*`, logger
 * `com.anthropic.claude_code.events`): `tool_result` → tool call,
 * `tool_decision` → decision, `api_request` → model call. Events arrive with
 * body `claude_code.<name>` and attribute `event.name` `<name>`, so both
 * spellings are accepted. Older versions send numbers and booleans as strings
 * and name the decision fields `decision`/`source` where newer ones use
 * `decision_type`/`decision_source` on `tool_result`. Its beta spans
 * (`claude_code.tool`) follow the GenAI conventions (`genai.ts`).
 *
 * A reject with a `tool_use_id` and no `tool_result` for it becomes a
 * rejected call in the store, which pairs the two by that id (DESIGN §6).
 */

import type { Attributes } from "../types.ts";
import { mcpServerFromName } from "./_classify.ts";
import { str } from "./_coerce.ts";
import { agentMapper } from "./_map.ts";
import type { AgentSpec, ToolFields } from "./_spec.ts";

/** What `tool_result` and `tool_decision` say alike about the tool. */
const tool: ToolFields = {
  toolType: {
    contains: ["tool_source", "mcp"],
    present: ["mcp_server_scope", "mcp_server_name"],
  },
  callId: ["tool_use_id"],
  callIdIsToolUseId: true,
  // Never both (DESIGN §6).
  arguments: ["tool_input", "tool_parameters"],
  promptId: ["prompt.id", "prompt_id"],
  mcpServerName: claudeMcpServer,
  mcpServerScope: ["mcp_server_scope"],
};

/** Claude Code's events. */
export const claudeCodeSpec: AgentSpec = {
  signal: "logs",
  eventName: { prefix: "claude_code." },
  sessionKey: "session.id",
  toolNameKey: "tool_name",
  serviceVersionIsAgent: true,
  events: {
    "tool_result": {
      kind: "tool_call",
      ...tool,
      decision: ["decision_type", "decision"],
      decisionSource: ["decision_source", "source"],
      duration: ["duration_ms"],
      resultSize: ["tool_result_size_bytes"],
      failure: { success: "success", error: ["error"], errorType: ["error_type"] },
    },
    "tool_decision": {
      kind: "decision",
      ...tool,
      // `decision` here; `decision_type` is the tool_result spelling, accepted too.
      decision: ["decision", "decision_type"],
      decisionSource: ["source", "decision_source"],
    },
    "api_request": {
      kind: "model_call",
      provider: { value: "anthropic" },
      model: ["model"],
      requestId: ["request_id"],
      // Claude Code reports input without cache reads already (DESIGN §6).
      inputTokens: ["input_tokens"],
      inputIncludesCache: false,
      outputTokens: ["output_tokens"],
      cacheReadTokens: ["cache_read_tokens"],
      cacheCreationTokens: ["cache_creation_tokens"],
      cost: { usd: "cost_usd", micros: "cost_usd_micros" },
      duration: ["duration_ms"],
    },
  },
};

/** Maps one Claude Code log record. Spans (beta traces) are not mapped here. */
export const mapClaudeCode = agentMapper(claudeCodeSpec);

/**
 * The MCP server: attribute `mcp_server_name`, else `mcp_server_name` inside
 * the JSON `tool_parameters` (sent with `OTEL_LOG_TOOL_DETAILS=1`), else the
 * server part of an `mcp__server__tool` name.
 */
function claudeMcpServer(a: Attributes, toolName: string): string | undefined {
  const direct = str(a["mcp_server_name"]);
  if (direct !== undefined) return direct;
  const params = a["tool_parameters"];
  if (typeof params === "string") {
    if (params.includes("mcp_server_name")) {
      try {
        const parsed: unknown = JSON.parse(params);
        if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
          const name = (parsed as Record<string, unknown>)["mcp_server_name"];
          if (typeof name === "string" && name !== "") return name;
        }
      } catch {
        // Not JSON: fall back to the tool name.
      }
    }
  } else if (params !== null && typeof params === "object" && !Array.isArray(params)) {
    const name = str(params["mcp_server_name"]);
    if (name !== undefined) return name;
  }
  return mcpServerFromName(toolName);
}
