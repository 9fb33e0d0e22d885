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

import type { Attributes, ToolCallEvent } from "../../model/telemetry.ts";
import { decisionRejects } from "./_classify.ts";
import { str } from "./_coerce.ts";
import { agentMapper } from "./_map.ts";
import { agentSpec } from "./_spec.ts";

/**
 * Gemini CLI's events. Its spans use Gemini's own operation names
 * (`tool_call`, `llm_call`), not the semconv ones, and are not mapped.
 */
export const geminiCliSpec = agentSpec({
  eventName: { prefix: "gemini_cli." },
  sessionKey: "session.id",
  toolNameKey: ["function_name"],
  serviceVersionIsAgent: false,
  // Seen in recorded runs (tests/fixtures/agents/real/); file_operation is not here: not kept
  // yet, it counts as unmapped until it is mapped.
  notKept: {
    "user_prompt": "the prompt's text: not kept",
    "api_request": "the request of a model call: the call comes from api_response",
    "config": "the session's configuration",
    "startup_stats": "start-up timing",
    "ripgrep_fallback": "a start-up diagnostic",
    "model_routing": "which model a request was routed to",
    "plan.approval_mode_duration": "time spent in an approval mode",
  },
}, {
  "tool_call": {
    kind: "tool_call",
    toolType: { equals: ["tool_type", "mcp"] },
    // Gemini CLI sends no call id today; take one if a version starts to.
    callId: ["call_id"],
    arguments: ["function_args"],
    promptId: ["prompt_id"],
    model: ["model"],
    mcpServerName: ["mcp_server_name"],
    decision: ["decision"],
    duration: ["duration_ms"],
    resultSize: ["content_length"],
    refused: geminiRefused,
    failure: {
      success: "success",
      error: ["error", "error.message"],
      errorType: ["error_type", "error.type"],
      exitFailure: commandFailure,
    },
  },
  /**
   * Gemini's `input_token_count` includes `cached_content_token_count`, and
   * its `output_token_count` excludes thinking: `thoughts_token_count` is
   * added to output (docs/design.md §6.2 "Token counts").
   */
  "api_response": {
    kind: "model_call",
    provider: { value: "" },
    model: ["model"],
    requestId: ["response_id"],
    inputTokens: ["input_token_count"],
    inputIncludesCache: true,
    outputTokens: ["output_token_count"],
    thoughtsTokens: ["thoughts_token_count"],
    cacheReadTokens: ["cached_content_token_count"],
    duration: ["duration_ms"],
  },
});

/** Maps one Gemini CLI log record. */
export const mapGeminiCli = agentMapper(geminiCliSpec);

/** Gemini's `error_type` for a call its policy engine or a hook denied. */
const POLICY_VIOLATION = "policy_violation";

/**
 * A call the user rejected (`decision` `reject`), or one the user's or
 * admin's policy (or a hook) denied: no decision and `error_type`
 * `policy_violation`, rejected by config (docs/ingest-mapping.md §6).
 */
function geminiRefused(call: ToolCallEvent, a: Attributes): boolean {
  if (call.decision !== undefined) return decisionRejects(call.decision);
  if ((str(a["error_type"]) ?? str(a["error.type"])) !== POLICY_VIOLATION) return false;
  call.decision = "reject";
  call.decisionSource = "config";
  return true;
}

/**
 * The error message for a tool call whose `metadata` reports a failed
 * command (the shell tool's `{"exitCode":6,"isError":true}`, sent as a JSON
 * string), in Gemini's own words for it; undefined when it reports none.
 */
function commandFailure(a: Attributes): string | undefined {
  let value: unknown = a["metadata"];
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
