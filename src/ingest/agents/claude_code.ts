/**
 * Claude Code (`service.name` `claude-code*`, logger
 * `com.anthropic.claude_code.events`): `tool_result` → tool call,
 * `tool_decision` → decision, `api_request` → model call. Events arrive with
 * body `claude_code.<name>` and attribute `event.name` `<name>`, so both
 * spellings are accepted. Older versions send numbers and booleans as strings
 * and name the decision fields `decision`/`source` where newer ones use
 * `decision_type`/`decision_source` on `tool_result`.
 */

import type { Attributes, DecisionEvent, MapResult, OtlpRecord } from "../types.ts";
import {
  callIdentity,
  eventBasics,
  ignored,
  mapped,
  modelIdentity,
  newModelCall,
  newToolCall,
  recordContext,
  shortEventName,
  toolEventBasics,
  toolIdentity,
  wholeMs,
} from "./_base.ts";
import { decisionRejects, isMcpName, mcpServerFromName, toolCategory } from "./_classify.ts";
import type { ToolType } from "./_classify.ts";
import { bool, count, firstStr, jsonText, num, str } from "./_coerce.ts";

const PREFIX = "claude_code.";

/** Maps one Claude Code log record. Spans (beta traces) are not mapped. */
export function mapClaudeCode(record: OtlpRecord): MapResult {
  if (record.signal !== "logs") return ignored;
  switch (shortEventName(record.eventName, PREFIX)) {
    case "tool_result":
      return toolResult(record);
    case "tool_decision":
      return toolDecision(record);
    case "api_request":
      return apiRequest(record);
    default:
      return ignored;
  }
}

function toolResult(record: OtlpRecord): MapResult {
  const a = record.attributes;
  const basics = toolEventBasics(record, "session.id", "tool_name");
  if ("status" in basics) return basics;
  const { sessionId, toolName, time } = basics;

  const toolType = claudeToolType(a, toolName);
  const call = newToolCall(recordContext(record, true), sessionId, time.ms, toolName, toolType);
  const success = bool(a["success"]);
  const errorText = str(a["error"]);
  if (success === false || (success === undefined && errorText !== undefined)) {
    call.outcome = "error";
    call.errorMessage = errorText;
    call.errorType = str(a["error_type"]);
  }
  call.durationMs = wholeMs(num(a["duration_ms"]));
  call.resultSizeBytes = count(a["tool_result_size_bytes"]) ?? null;
  call.arguments = claudeArguments(a);
  const toolUseId = str(a["tool_use_id"]);
  call.toolCallId = toolUseId;
  call.toolUseId = toolUseId;
  call.identity = toolUseId !== undefined ? callIdentity(toolUseId) : toolIdentity(
    record,
    PREFIX + "tool_result",
    time,
    toolName,
    call.arguments,
    call.durationMs,
    call.outcome,
  );
  call.decision = firstStr(a, "decision_type", "decision");
  call.decisionSource = firstStr(a, "decision_source", "source");
  call.promptId = firstStr(a, "prompt.id", "prompt_id");
  if (toolType === "mcp") call.mcpServerName = claudeMcpServer(a, toolName);
  call.mcpServerScope = str(a["mcp_server_scope"]);
  return mapped(call);
}

function toolDecision(record: OtlpRecord): MapResult {
  const a = record.attributes;
  const basics = toolEventBasics(record, "session.id", "tool_name");
  if ("status" in basics) return basics;
  const { sessionId, toolName, time } = basics;
  // `decision` here; `decision_type` is the tool_result spelling, accepted too.
  const decision = firstStr(a, "decision", "decision_type");
  if (decision === undefined) return ignored;

  const ctx = recordContext(record, true);
  const rejects = decisionRejects(decision);
  const toolUseId = str(a["tool_use_id"]);
  const toolType = claudeToolType(a, toolName);

  if (toolUseId === undefined) {
    // Nothing to pair with: an accept annotates no call, a reject is a
    // rejected call on its own.
    if (!rejects) return ignored;
    const call = newToolCall(ctx, sessionId, time.ms, toolName, toolType);
    call.outcome = "rejected";
    call.arguments = claudeArguments(a);
    call.identity = toolIdentity(
      record,
      PREFIX + "tool_decision",
      time,
      toolName,
      call.arguments,
      null,
      "rejected",
    );
    call.decision = decision;
    call.decisionSource = firstStr(a, "source", "decision_source");
    call.promptId = firstStr(a, "prompt.id", "prompt_id");
    if (toolType === "mcp") call.mcpServerName = claudeMcpServer(a, toolName);
    call.mcpServerScope = str(a["mcp_server_scope"]);
    return mapped(call);
  }

  const event: DecisionEvent = {
    kind: "decision",
    sessionId,
    timeMs: time.ms,
    agentSystem: ctx.agentSystem,
    agentVersion: ctx.agentVersion,
    identity: callIdentity(toolUseId),
    toolName,
    toolType,
    category: toolCategory(toolName, toolType),
    toolCallId: toolUseId,
    toolUseId,
    decision,
    decisionSource: firstStr(a, "source", "decision_source"),
    rejects,
    arguments: claudeArguments(a),
    promptId: firstStr(a, "prompt.id", "prompt_id"),
    source: ctx.source,
    osType: ctx.osType,
    hostArch: ctx.hostArch,
    terminalType: ctx.terminalType,
    traceId: ctx.traceId,
    spanId: ctx.spanId,
  };
  return mapped(event);
}

function apiRequest(record: OtlpRecord): MapResult {
  const a = record.attributes;
  const basics = eventBasics(record, "session.id");
  if ("status" in basics) return basics;
  const { sessionId, time } = basics;

  const model = str(a["model"]) ?? "";
  const call = newModelCall(recordContext(record, true), sessionId, time.ms, "anthropic", model);
  call.identity = modelIdentity(record, PREFIX + "api_request", time, model, str(a["request_id"]));
  // Claude Code reports input without cache reads already (DESIGN §6).
  call.inputTokens = count(a["input_tokens"]) ?? 0;
  call.outputTokens = count(a["output_tokens"]) ?? 0;
  call.cacheReadTokens = count(a["cache_read_tokens"]) ?? 0;
  call.cacheCreationTokens = count(a["cache_creation_tokens"]) ?? 0;
  call.costUsd = claudeCost(a);
  call.durationMs = wholeMs(num(a["duration_ms"]));
  return mapped(call);
}

/** `cost_usd`, else `cost_usd_micros` / 1e6, else null (no cost reported). */
function claudeCost(a: Attributes): number | null {
  const usd = num(a["cost_usd"]);
  if (usd !== undefined) return usd;
  const micros = num(a["cost_usd_micros"]);
  return micros === undefined ? null : micros / 1e6;
}

/** `tool_input`, else `tool_parameters` — never both (DESIGN §6). */
function claudeArguments(a: Attributes): string | undefined {
  return jsonText(a["tool_input"]) ?? jsonText(a["tool_parameters"]);
}

/**
 * MCP when `tool_source` names MCP (`mcp`, `sdk_host_builtin_mcp`), when an
 * `mcp_server_scope` or `mcp_server_name` is given, or for MCP names
 * (`mcp__server__tool`, redacted `mcp_tool`).
 */
function claudeToolType(a: Attributes, toolName: string): ToolType {
  const toolSource = str(a["tool_source"]);
  if (toolSource !== undefined && toolSource.includes("mcp")) return "mcp";
  if (str(a["mcp_server_scope"]) !== undefined || str(a["mcp_server_name"]) !== undefined) {
    return "mcp";
  }
  return isMcpName(toolName) ? "mcp" : "builtin";
}

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
