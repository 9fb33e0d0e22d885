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

import type { Attributes, ToolCallEvent } from "../../model/telemetry.ts";
import { bool, str } from "./_coerce.ts";
import { agentMapper } from "./_map.ts";
import { agentSpec } from "./_spec.ts";

/**
 * An MCP call names its server in `mcp_server` (results) and its namespace
 * `mcp__<server>` (results and decisions); its `tool_name` is the tool's own.
 */
const MCP = { present: ["mcp_server"], contains: ["tool_namespace", "mcp__"] } as const;

function codexMcpServer(a: Attributes): string | undefined {
  const namespace = str(a["tool_namespace"]);
  return str(a["mcp_server"]) ??
    (namespace?.startsWith("mcp__") && namespace.length > 5 ? namespace.slice(5) : undefined);
}

/** Codex CLI's events. Its spans carry no tokens or cost and are not mapped. */
export const codexSpec = agentSpec({
  eventName: { prefix: "codex." },
  sessionKey: "conversation.id",
  // Seen in recorded runs (tests/fixtures/agents/real/).
  notKept: {
    "user_prompt": "the prompt's text: not kept",
    "api_request": "the HTTP request of a model call: the call comes from sse_event",
    "startup_phase": "start-up timing",
    "turn_ttft": "time to a turn's first token",
  },
}, {
  "tool_result": {
    kind: "tool_call",
    toolType: MCP,
    callId: ["call_id"],
    arguments: ["arguments"],
    model: ["model"],
    // `mcp_server_origin` is where the server lives (a URL origin), not its
    // configured scope: it is not `mcp_server_scope`.
    mcpServerName: codexMcpServer,
    // `/root` for the main agent, `/root/<task>` for one it spawned.
    agentName: ["agent_name"],
    result: ["output"],
    duration: ["duration_ms"],
    refused: codexRefused,
    failure: codexFailure,
  },
  "tool_decision": {
    kind: "decision",
    toolType: MCP,
    callId: ["call_id"],
    mcpServerName: codexMcpServer,
    model: ["model"],
    decision: ["decision"],
    decisionSource: ["source"],
    normalize: variantName,
  },
  /**
   * `response.completed` carries the token counts. OpenAI usage semantics:
   * `input_token_count` includes `cached_token_count`, and
   * `output_token_count` already includes `reasoning_token_count` (so
   * reasoning is not added again). No cost is reported; the provider comes
   * from `codex.conversation_starts`, which the store applies to the
   * session's later model calls.
   */
  "sse_event": {
    kind: "model_call",
    requires: ["input_token_count", "output_token_count"],
    provider: ["provider_name"],
    model: ["model"],
    inputTokens: ["input_token_count"],
    inputIncludesCache: true,
    outputTokens: ["output_token_count"],
    cacheReadTokens: ["cached_token_count"],
    duration: ["duration_ms"],
  },
  "conversation_starts": { kind: "session_info", provider: ["provider_name"] },
  // A spawned agent (`spawn_agent`) runs as a conversation of its own: the
  // spawn's message names both threads, which links the child to its parent.
  "agent_communication": {
    kind: "session_info",
    only: { kind: "spawn", state: "send" },
    session: "receiver_thread_id",
    parentSession: ["sender_thread_id"],
  },
});

/** Maps one Codex log record. */
export const mapCodex = agentMapper(codexSpec);

/**
 * A failed result whose output is Codex refusing the command before it ran:
 * an exec-policy `forbidden` rule, or a `prompt` rule (or sandbox escalation)
 * under an approval policy that cannot ask, reported as `<tool> failed:
 * CreateProcess { message: "Rejected(…)" }` with no decision event. Rejected
 * by config (docs/ingest-mapping.md §5).
 */
function codexRefused(call: ToolCallEvent, a: Attributes): boolean {
  const output = call.result;
  if (output === undefined || bool(a["success"]) !== false) return false;
  const marker = ' failed: CreateProcess { message: "Rejected(';
  const at = output.indexOf(marker);
  if (at <= 0 || at > 64 || /\s/.test(output.slice(0, at))) return false;
  call.decision = "reject";
  call.decisionSource = "config";
  return true;
}

/**
 * `success=false`, or a non-zero exit code in the output's header, is an
 * error whose message is the output (docs/design.md §6.2 "Codex failures").
 */
function codexFailure(call: ToolCallEvent, a: Attributes): void {
  const output = call.result;
  if (bool(a["success"]) === false || (output !== undefined && nonZeroExit(output))) {
    call.outcome = "error";
    call.errorMessage = output !== undefined && output !== "" ? output : str(a["error.message"]);
    call.errorType = str(a["error.type"]) ?? str(a["error_type"]);
  }
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
