/**
 * OpenTelemetry GenAI semantic-convention spans, from any service:
 * `gen_ai.operation.name` `execute_tool` → tool call; `chat`,
 * `generate_content`, `text_completion` → model call; other operations
 * (`invoke_agent`, `embeddings`, …) are ignored. The session is
 * `gen_ai.conversation.id`. Deprecated names are accepted beside the current
 * ones (`gen_ai.system`, `gen_ai.tool.call_id`, `gen_ai.usage.prompt_tokens`…).
 */

import type { Attributes, MapResult, OtlpRecord } from "../types.ts";
import {
  callIdentity,
  eventBasics,
  ignored,
  inputWithoutCache,
  mapped,
  modelIdentity,
  newModelCall,
  newToolCall,
  recordContext,
  toolEventBasics,
  toolIdentity,
} from "./_base.ts";
import { isMcpName } from "./_classify.ts";
import { count, firstStr, jsonText, str, text, utf8Length } from "./_coerce.ts";
import { spanDurationMs } from "./_time.ts";

/** Maps one span that carries `gen_ai.operation.name`. */
export function mapGenAiSpan(record: OtlpRecord): MapResult {
  switch (str(record.attributes["gen_ai.operation.name"])) {
    case "execute_tool":
      return executeTool(record);
    case "chat":
    case "generate_content":
    case "text_completion":
      return inference(record);
    default:
      return ignored;
  }
}

function executeTool(record: OtlpRecord): MapResult {
  const a = record.attributes;
  const basics = toolEventBasics(record, "gen_ai.conversation.id", "gen_ai.tool.name");
  if ("status" in basics) return basics;
  const { sessionId, toolName, time } = basics;

  // `gen_ai.tool.type` is function/extension/datastore, never MCP; an MCP
  // `tools/call` span says so with `mcp.method.name`.
  const toolType = str(a["mcp.method.name"]) !== undefined || isMcpName(toolName)
    ? "mcp"
    : "builtin";
  const call = newToolCall(recordContext(record, true), sessionId, time.ms, toolName, toolType);
  const errorType = str(a["error.type"]);
  if (record.statusCode === 2 || errorType !== undefined) {
    call.outcome = "error";
    call.errorType = errorType;
    call.errorMessage = record.statusMessage !== ""
      ? record.statusMessage
      : str(a["error.message"]);
  }
  call.durationMs = spanDurationMs(record.timeUnixNano, record.observedTimeUnixNano);
  const result = text(a["gen_ai.tool.call.result"]);
  call.result = result;
  call.resultSizeBytes = result === undefined ? null : utf8Length(result);
  call.arguments = jsonText(a["gen_ai.tool.call.arguments"]);
  const callId = firstStr(a, "gen_ai.tool.call.id", "gen_ai.tool.call_id");
  call.toolCallId = callId;
  call.identity = callId !== undefined ? callIdentity(callId) : toolIdentity(
    record,
    record.eventName,
    time,
    toolName,
    call.arguments,
    call.durationMs,
    call.outcome,
  );
  call.model = firstStr(a, "gen_ai.request.model", "gen_ai.response.model");
  call.agentName = str(a["gen_ai.agent.name"]);
  call.providerName = providerOf(a);
  call.toolDescription = str(a["gen_ai.tool.description"]);
  if (call.agentVersion === "") call.agentVersion = str(a["gen_ai.agent.version"]) ?? "";
  return mapped(call);
}

/**
 * Semconv input tokens include cached ones: `input − cache_read` (never below
 * 0), the cached count going to `cacheReadTokens` (DESIGN §6). Output tokens
 * already include reasoning tokens.
 */
function inference(record: OtlpRecord): MapResult {
  const a = record.attributes;
  const basics = eventBasics(record, "gen_ai.conversation.id");
  if ("status" in basics) return basics;
  const { sessionId, time } = basics;

  const model = firstStr(a, "gen_ai.request.model", "gen_ai.response.model") ?? "";
  const call = newModelCall(
    recordContext(record, true),
    sessionId,
    time.ms,
    providerOf(a) ?? "",
    model,
  );
  if (call.agentVersion === "") call.agentVersion = str(a["gen_ai.agent.version"]) ?? "";
  call.identity = modelIdentity(
    record,
    record.eventName,
    time,
    model,
    str(a["gen_ai.response.id"]),
  );
  const input = count(a["gen_ai.usage.input_tokens"]) ?? count(a["gen_ai.usage.prompt_tokens"]) ??
    0;
  const cached = count(a["gen_ai.usage.cache_read.input_tokens"]) ??
    count(a["gen_ai.usage.cache_read_input_tokens"]) ?? 0;
  call.inputTokens = inputWithoutCache(input, cached);
  call.outputTokens = count(a["gen_ai.usage.output_tokens"]) ??
    count(a["gen_ai.usage.completion_tokens"]) ?? 0;
  call.cacheReadTokens = cached;
  call.cacheCreationTokens = count(a["gen_ai.usage.cache_creation.input_tokens"]) ??
    count(a["gen_ai.usage.cache_creation_input_tokens"]) ?? 0;
  call.durationMs = spanDurationMs(record.timeUnixNano, record.observedTimeUnixNano);
  return mapped(call);
}

function providerOf(a: Attributes): string | undefined {
  return firstStr(a, "gen_ai.provider.name", "gen_ai.system");
}
