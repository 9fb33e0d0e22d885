/**
 * Claude Code (`service.name` `claude-code*`, logger
 * `com.anthropic.claude_code.events`): `tool_result` → tool call,
 * `tool_decision` → decision, `api_request` → model call. Events arrive with
 * body `claude_code.<name>` and attribute `event.name` `<name>`, so both
 * spellings are accepted. Older versions send numbers and booleans as strings
 * and name the decision fields `decision`/`source` where newer ones use
 * `decision_type`/`decision_source` on `tool_result`.
 *
 * Its beta spans (`CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1`) are its own too:
 * `claude_code.tool` → the tool call of the same `tool_use_id` (the log's row
 * when both arrive), `claude_code.llm_request` → the model call of the same
 * `request_id` (one row with the `api_request` log, whichever comes first; the
 * log brings the cost). Their session is `session.id`, as the logs': a
 * subagent's spans carry the subagent's id in `gen_ai.conversation.id`, which
 * is not a session of its own.
 *
 * A reject with a `tool_use_id` and no `tool_result` for it becomes a
 * rejected call in the store, which pairs the two by that id (docs/ingest-mapping.md §8).
 */

import type { Attributes } from "../../model/telemetry.ts";
import { mcpServerFromName } from "./_classify.ts";
import { str } from "./_coerce.ts";
import { agentMapper, spanFailure } from "./_map.ts";
import { agentSpec, type ToolFields } from "./_spec.ts";

/** What `tool_result` and `tool_decision` say alike about the tool. */
const tool: ToolFields = {
  toolType: {
    contains: ["tool_source", "mcp"],
    present: ["mcp_server_scope", "mcp_server_name"],
  },
  callId: ["tool_use_id"],
  callIdIsToolUseId: true,
  // Never both (docs/design.md §6.2 "What is scanned").
  arguments: ["tool_input", "tool_parameters"],
  promptId: ["prompt.id", "prompt_id"],
  mcpServerName: claudeMcpServer,
  mcpOwnToolName: claudeMcpTool,
  mcpServerScope: ["mcp_server_scope"],
};

/**
 * A subagent's calls carry its id (`agent_id`, on logs and spans alike; its
 * `agent.name` only on model requests so far): the call's `agent_name`. The
 * main agent's carry none.
 */
const SUBAGENT = ["agent.name", "agent_id"];

/** Claude Code's events. */
export const claudeCodeSpec = agentSpec({
  eventName: { prefix: "claude_code." },
  sessionKey: "session.id",
  // Seen in recorded runs (tests/fixtures/agents/real/); hooks, MCP connections and subagents'
  // ends are not here: not kept yet, they count as unmapped until they are mapped.
  notKept: {
    "user_prompt": "the prompt's text and length: not kept",
    "assistant_response": "the model's text: not kept",
    "managed_settings_resolved": "configuration at start-up",
    "plugin_loaded": "configuration at start-up",
    "hook_registered": "configuration at start-up",
  },
}, {
  "tool_result": {
    kind: "tool_call",
    ...tool,
    agentName: SUBAGENT,
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
    // Claude Code reports input without cache reads already (docs/design.md §6.2).
    inputTokens: ["input_tokens"],
    inputIncludesCache: false,
    outputTokens: ["output_tokens"],
    cacheReadTokens: ["cache_read_tokens"],
    cacheCreationTokens: ["cache_creation_tokens"],
    cost: { usd: "cost_usd", micros: "cost_usd_micros" },
    duration: ["duration_ms"],
  },
});

/** Maps one Claude Code log record. */
export const mapClaudeCode = agentMapper(claudeCodeSpec);

/** Claude Code's beta spans, by span name. */
export const claudeCodeTraceSpec = agentSpec({
  signal: "traces",
  eventName: { prefix: "claude_code." },
  sessionKey: "session.id",
  toolNameKey: ["tool_name", "gen_ai.tool.name"],
}, {
  "tool": {
    kind: "tool_call",
    ...tool,
    callId: ["tool_use_id", "gen_ai.tool.call.id"],
    agentName: SUBAGENT,
    // The span knows no arguments, result or outcome but a failed status;
    // the `tool_result` log of the same call replaces its row.
    arguments: undefined,
    duration: "span",
    failure: spanFailure,
  },
  "llm_request": {
    kind: "model_call",
    // A request that failed before a response reports no usage: not a model call.
    requires: ["input_tokens", "output_tokens"],
    provider: { value: "anthropic" },
    model: ["model", "gen_ai.request.model"],
    requestId: ["request_id", "gen_ai.response.id"],
    inputTokens: ["input_tokens"],
    inputIncludesCache: false,
    outputTokens: ["output_tokens"],
    cacheReadTokens: ["cache_read_tokens"],
    cacheCreationTokens: ["cache_creation_tokens"],
    duration: ["duration_ms"],
  },
});

/** Maps one Claude Code span. */
export const mapClaudeCodeSpan = agentMapper(claudeCodeTraceSpec);

/**
 * The MCP server: attribute `mcp_server_name`, else `mcp_server_name` inside
 * the JSON `tool_parameters` (sent with `OTEL_LOG_TOOL_DETAILS=1`), else the
 * span's `anthropic.mcp.server.name`, else the server part of an
 * `mcp__server__tool` name (the spans' `tool_name`).
 */
function claudeMcpServer(a: Attributes, toolName: string): string | undefined {
  return str(a["mcp_server_name"]) ?? toolParameter(a, "mcp_server_name") ??
    str(a["anthropic.mcp.server.name"]) ?? mcpServerFromName(toolName);
}

/** The MCP tool's own name: `mcp_tool_name` beside the server, or inside `tool_parameters`. */
function claudeMcpTool(a: Attributes): string | undefined {
  return str(a["mcp_tool_name"]) ?? toolParameter(a, "mcp_tool_name");
}

/** A text field of the JSON `tool_parameters` (an object or its JSON text), if any. */
function toolParameter(a: Attributes, key: string): string | undefined {
  const params = a["tool_parameters"];
  if (typeof params === "string") {
    if (!params.includes(key)) return undefined;
    try {
      const parsed: unknown = JSON.parse(params);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
        const value = (parsed as Record<string, unknown>)[key];
        if (typeof value === "string" && value !== "") return value;
      }
    } catch {
      // Not JSON.
    }
    return undefined;
  }
  if (params !== null && typeof params === "object" && !Array.isArray(params)) {
    return str(params[key]);
  }
  return undefined;
}
