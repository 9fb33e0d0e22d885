/**
 * OpenAI Codex CLI (`service.name` `codex_*`, the originator:
 * `codex_cli_rs`, `codex_exec`, `codex_tui`…): `codex.tool_result` → tool
 * call, `codex.tool_decision` → decision, `codex.sse_event` with token counts
 * → model call, `codex.conversation_starts` → the session's provider. The
 * session is `conversation.id`. Fields written with `%` arrive as strings
 * (`duration_ms`, `success`, `input_token_count`), others as ints.
 *
 * What Codex 0.169.0 really sends (`tests/fixtures/agents/real/codex-0.169.0/`)
 * decides three rules here: a command its exec policy refused is a failed
 * result whose output reads `exec_command failed: CreateProcess { message:
 * "Rejected(…)" }` with no decision event (→ rejected by config); a command
 * that exited non-zero is `success=true` with `Process exited with code N`
 * (or `Exit code: N` for `apply_patch`) in the output's header (→ error); and
 * decisions and their sources arrive as Rust variant names (`Config`).
 */

import type { DecisionEvent, MapResult, OtlpRecord, SessionInfoEvent } from "../types.ts";
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
import { decisionRejects, isMcpName, toolCategory } from "./_classify.ts";
import { bool, count, jsonText, num, str, text, utf8Length } from "./_coerce.ts";

const PREFIX = "codex.";

/** Maps one Codex log record. Codex spans carry no tokens or cost and are not mapped. */
export function mapCodex(record: OtlpRecord): MapResult {
  if (record.signal !== "logs") return ignored;
  switch (shortEventName(record.eventName, PREFIX)) {
    case "tool_result":
      return toolResult(record);
    case "tool_decision":
      return toolDecision(record);
    case "sse_event":
      return sseEvent(record);
    case "conversation_starts":
      return conversationStarts(record);
    default:
      return ignored;
  }
}

function toolResult(record: OtlpRecord): MapResult {
  const a = record.attributes;
  const basics = toolEventBasics(record, "conversation.id", "tool_name");
  if ("status" in basics) return basics;
  const { sessionId, toolName, time } = basics;

  const mcpServer = str(a["mcp_server"]);
  const toolType = mcpServer !== undefined || isMcpName(toolName) ? "mcp" : "builtin";
  const call = newToolCall(recordContext(record, true), sessionId, time.ms, toolName, toolType);
  const output = text(a["output"]);
  call.result = output;
  call.resultSizeBytes = output === undefined ? null : utf8Length(output);
  const success = bool(a["success"]);
  call.durationMs = wholeMs(num(a["duration_ms"]));
  if (success === false && output !== undefined && isPolicyRejection(output)) {
    // The tool never ran: Codex's own policy refused it (DESIGN §4).
    call.outcome = "rejected";
    call.decision = "reject";
    call.decisionSource = "config";
    call.durationMs = null;
    call.resultSizeBytes = null;
  } else if (success === false || (output !== undefined && nonZeroExit(output))) {
    call.outcome = "error";
    // A failed result's error message is its output (DESIGN §6).
    call.errorMessage = output !== undefined && output !== "" ? output : str(a["error.message"]);
    call.errorType = str(a["error.type"]) ?? str(a["error_type"]);
  }
  call.arguments = jsonText(a["arguments"]);
  const callId = str(a["call_id"]);
  call.toolCallId = callId;
  call.identity = callId !== undefined ? callIdentity(callId) : toolIdentity(
    record,
    PREFIX + "tool_result",
    time,
    toolName,
    call.arguments,
    call.durationMs,
    call.outcome,
  );
  call.model = str(a["model"]);
  // `mcp_server_origin` is where the server lives (a URL origin), not its
  // configured scope: it is not `mcp_server_scope`.
  call.mcpServerName = mcpServer;
  return mapped(call);
}

function toolDecision(record: OtlpRecord): MapResult {
  const a = record.attributes;
  const basics = toolEventBasics(record, "conversation.id", "tool_name");
  if ("status" in basics) return basics;
  const { sessionId, toolName, time } = basics;
  const reported = str(a["decision"]);
  if (reported === undefined) return ignored;
  const decision = variantName(reported);
  const decisionSource = optionalVariantName(str(a["source"]));

  const ctx = recordContext(record, true);
  const rejects = decisionRejects(decision);
  const toolType = isMcpName(toolName) ? "mcp" : "builtin";
  const callId = str(a["call_id"]);
  if (callId === undefined) {
    // Nothing to pair with: an approval annotates no call, a denial is a
    // rejected call on its own.
    if (!rejects) return ignored;
    const call = newToolCall(ctx, sessionId, time.ms, toolName, toolType);
    call.outcome = "rejected";
    call.identity = toolIdentity(
      record,
      PREFIX + "tool_decision",
      time,
      toolName,
      undefined,
      null,
      "rejected",
    );
    call.decision = decision;
    call.decisionSource = decisionSource;
    call.model = str(a["model"]);
    return mapped(call);
  }

  const event: DecisionEvent = {
    kind: "decision",
    sessionId,
    timeMs: time.ms,
    agentSystem: ctx.agentSystem,
    agentVersion: ctx.agentVersion,
    identity: callIdentity(callId),
    toolName,
    toolType,
    category: toolCategory(toolName, toolType),
    toolCallId: callId,
    toolUseId: undefined,
    decision,
    decisionSource,
    rejects,
    model: str(a["model"]),
    arguments: undefined,
    promptId: undefined,
    source: ctx.source,
    osType: ctx.osType,
    hostArch: ctx.hostArch,
    terminalType: ctx.terminalType,
    traceId: ctx.traceId,
    spanId: ctx.spanId,
  };
  return mapped(event);
}

/**
 * `response.completed` carries the token counts. OpenAI usage semantics:
 * `input_token_count` includes `cached_token_count`, and `output_token_count`
 * already includes `reasoning_token_count` (so reasoning is not added again).
 * No cost is reported; the provider comes from `codex.conversation_starts`,
 * which the store applies to the session's later model calls.
 */
function sseEvent(record: OtlpRecord): MapResult {
  const a = record.attributes;
  const input = count(a["input_token_count"]);
  const output = count(a["output_token_count"]);
  if (input === undefined && output === undefined) return ignored;
  const basics = eventBasics(record, "conversation.id");
  if ("status" in basics) return basics;
  const { sessionId, time } = basics;

  const model = str(a["model"]) ?? "";
  const provider = str(a["provider_name"]) ?? "";
  const call = newModelCall(recordContext(record, true), sessionId, time.ms, provider, model);
  call.identity = modelIdentity(record, PREFIX + "sse_event", time, model, undefined);
  const cached = count(a["cached_token_count"]) ?? 0;
  call.inputTokens = inputWithoutCache(input ?? 0, cached);
  call.outputTokens = output ?? 0;
  call.cacheReadTokens = cached;
  call.durationMs = wholeMs(num(a["duration_ms"]));
  return mapped(call);
}

function conversationStarts(record: OtlpRecord): MapResult {
  const a = record.attributes;
  const providerName = str(a["provider_name"]);
  if (providerName === undefined) return ignored;
  const basics = eventBasics(record, "conversation.id");
  if ("status" in basics) return basics;
  const { sessionId, time } = basics;

  const ctx = recordContext(record, true);
  const event: SessionInfoEvent = {
    kind: "session_info",
    sessionId,
    timeMs: time.ms,
    agentSystem: ctx.agentSystem,
    agentVersion: ctx.agentVersion,
    identity: `${PREFIX}conversation_starts:${time.ns}`,
    providerName,
  };
  return mapped(event);
}

/**
 * Whether a failed result's output is Codex refusing the command before it
 * ran: an exec-policy `forbidden` rule, or a `prompt` rule (or sandbox
 * escalation) under an approval policy that cannot ask. Codex reports these
 * as `<tool> failed: CreateProcess { message: "Rejected(…)" }`.
 */
function isPolicyRejection(output: string): boolean {
  const marker = ' failed: CreateProcess { message: "Rejected(';
  const at = output.indexOf(marker);
  return at > 0 && at <= 64 && !/\s/.test(output.slice(0, at));
}

/**
 * Whether a shell-like result reports a non-zero exit code in its header,
 * the lines before `Output:` (`Process exited with code N` for
 * `exec_command`, `Exit code: N` for `apply_patch`). Only the header is read,
 * so a command that prints such a line itself does not count.
 */
function nonZeroExit(output: string): boolean {
  const end = output.indexOf("\nOutput:\n");
  if (end < 0) return false;
  const header = /^(?:Process exited with code|Exit code:) (-?\d+)$/m.exec(output.slice(0, end));
  return header !== null && Number(header[1]) !== 0;
}

/**
 * A decision or source in the API's lower-case words: Codex writes some as
 * Rust variant names (`Config`, `AutomatedReviewer` → `config`,
 * `automated_reviewer`); snake_case values pass unchanged.
 */
function variantName(value: string): string {
  return value.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

function optionalVariantName(value: string | undefined): string | undefined {
  return value === undefined ? undefined : variantName(value);
}
