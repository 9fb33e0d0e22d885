/**
 * Google Gemini CLI (`service.name` `gemini-cli`): `gemini_cli.tool_call` →
 * tool call (rejected when its `decision` is `reject`), and
 * `gemini_cli.api_response` → model call. Gemini sends real numbers and
 * booleans, no call id, no provider and no cost; its resource
 * `service.version` is the Node version, so only `app.version` counts as the
 * agent version. The log body is prose; the name comes from `event.name`.
 *
 * What Gemini CLI 0.61.0 really sends (`tests/fixtures/agents/real/gemini-cli-0.61.0/`)
 * decides two rules here: a call the user's policy denied arrives with
 * `decision` null, `success=false` and `error_type=policy_violation` (→
 * rejected by config); a shell command that exited non-zero arrives with
 * `success=true` and `metadata` `{"exitCode":N,"isError":true}` (→ error).
 * Gemini sends that `metadata` only with `logPrompts` on.
 */

import type { AttributeValue, MapResult, OtlpRecord } from "../types.ts";
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
  shortEventName,
  toolEventBasics,
  toolIdentity,
  wholeMs,
} from "./_base.ts";
import { decisionRejects, isMcpName } from "./_classify.ts";
import { bool, count, jsonText, num, str } from "./_coerce.ts";

const PREFIX = "gemini_cli.";

/**
 * Maps one Gemini CLI log record. Its spans use Gemini's own operation names
 * (`tool_call`, `llm_call`), not the semconv ones, and are not mapped.
 */
export function mapGeminiCli(record: OtlpRecord): MapResult {
  if (record.signal !== "logs") return ignored;
  switch (shortEventName(record.eventName, PREFIX)) {
    case "tool_call":
      return toolCall(record);
    case "api_response":
      return apiResponse(record);
    default:
      return ignored;
  }
}

function toolCall(record: OtlpRecord): MapResult {
  const a = record.attributes;
  const basics = toolEventBasics(record, "session.id", "function_name");
  if ("status" in basics) return basics;
  const { sessionId, toolName, time } = basics;

  const toolType = str(a["tool_type"]) === "mcp" || isMcpName(toolName) ? "mcp" : "builtin";
  const call = newToolCall(recordContext(record, false), sessionId, time.ms, toolName, toolType);
  const decision = str(a["decision"]);
  const errorType = str(a["error_type"]) ?? str(a["error.type"]);
  call.decision = decision;
  if (decision !== undefined && decisionRejects(decision)) {
    call.outcome = "rejected";
  } else if (decision === undefined && errorType === POLICY_VIOLATION) {
    // The tool never ran: the user's or admin's policy (or a hook) denied it (DESIGN §4).
    call.outcome = "rejected";
    call.decision = "reject";
    call.decisionSource = "config";
  } else {
    const errorText = str(a["error"]) ?? str(a["error.message"]);
    const success = bool(a["success"]);
    const failure = commandFailure(a["metadata"]);
    if (success === false || (success === undefined && errorText !== undefined)) {
      call.outcome = "error";
      call.errorMessage = errorText;
      call.errorType = errorType;
    } else if (failure !== undefined) {
      call.outcome = "error";
      call.errorMessage = failure;
    }
    call.durationMs = wholeMs(num(a["duration_ms"]));
    call.resultSizeBytes = count(a["content_length"]) ?? null;
  }
  call.arguments = jsonText(a["function_args"]);
  // Gemini CLI sends no call id today; take one if a version starts to.
  const callId = str(a["call_id"]);
  call.toolCallId = callId;
  call.identity = callId !== undefined ? callIdentity(callId) : toolIdentity(
    record,
    PREFIX + "tool_call",
    time,
    toolName,
    call.arguments,
    call.durationMs,
    call.outcome,
  );
  call.promptId = str(a["prompt_id"]);
  call.model = str(a["model"]);
  if (toolType === "mcp") call.mcpServerName = str(a["mcp_server_name"]);
  return mapped(call);
}

/** Gemini's `error_type` for a call its policy engine or a hook denied. */
const POLICY_VIOLATION = "policy_violation";

/**
 * The error message for a tool call whose `metadata` reports a failed
 * command (the shell tool's `{"exitCode":6,"isError":true}`, sent as a JSON
 * string), in Gemini's own words for it; undefined when it reports none.
 */
function commandFailure(metadata: AttributeValue | undefined): string | undefined {
  let value: unknown = metadata;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const { exitCode, isError } = value as Record<string, unknown>;
  if (typeof exitCode === "number" && exitCode !== 0) {
    return `Command exited with code: ${exitCode}`;
  }
  return isError === true ? "Command failed" : undefined;
}

/**
 * Gemini's `input_token_count` includes `cached_content_token_count`, and its
 * `output_token_count` excludes thinking: `thoughts_token_count` is added to
 * output (DESIGN §6).
 */
function apiResponse(record: OtlpRecord): MapResult {
  const a = record.attributes;
  const basics = eventBasics(record, "session.id");
  if ("status" in basics) return basics;
  const { sessionId, time } = basics;

  const model = str(a["model"]) ?? "";
  const call = newModelCall(recordContext(record, false), sessionId, time.ms, "", model);
  call.identity = modelIdentity(
    record,
    PREFIX + "api_response",
    time,
    model,
    str(a["response_id"]),
  );
  const cached = count(a["cached_content_token_count"]) ?? 0;
  call.inputTokens = inputWithoutCache(count(a["input_token_count"]) ?? 0, cached);
  call.outputTokens = (count(a["output_token_count"]) ?? 0) +
    (count(a["thoughts_token_count"]) ?? 0);
  call.cacheReadTokens = cached;
  call.durationMs = wholeMs(num(a["duration_ms"]));
  return mapped(call);
}
