/**
 * The `tool_calls` row the ingest logic stores is built from the column list
 * (`src/store/tool_call_row.ts`): each column takes the event field of its
 * name, the redacted columns take detection's text instead of the event's,
 * and an absent field is null. Held here to the row as it was written out by
 * hand, so a column filled from the wrong place (the event's unredacted text,
 * another field) fails.
 */
import assert from "node:assert/strict";
import type { Detection } from "../src/detect/mod.ts";
import { TOOL_CALLS } from "../src/store/table_columns.ts";
import { type PendingCall, toolCallRow } from "../src/store/tool_call_row.ts";

/** A call with every field of a stored tool call set, each to a value of its own. */
const CALL: PendingCall = {
  sessionId: "s-1",
  timeMs: 1_700_000_000_123,
  agentSystem: "claude-code",
  agentVersion: "2.1.0",
  toolName: "Bash",
  toolType: "builtin",
  category: "code_exec",
  outcome: "error",
  durationMs: 42,
  resultSizeBytes: 7,
  toolCallId: "call-1",
  toolUseId: "toolu-1",
  arguments: '{"command":"echo AKIA-secret"}',
  result: "AKIA-secret",
  errorMessage: "failed with AKIA-secret",
  errorType: "type AKIA-secret",
  decision: "accept",
  decisionSource: "config",
  model: "claude-x",
  promptId: "p-1",
  agentName: "agent AKIA-secret",
  providerName: "anthropic",
  toolDescription: "runs AKIA-secret",
  source: "otlp_logs",
  mcpServerName: "mcp AKIA-secret",
  mcpServerScope: "scope AKIA-secret",
  osType: "linux",
  hostArch: "amd64",
  terminalType: "xterm",
  cwd: "/home/AKIA-secret",
  traceId: "t-1",
  spanId: "sp-1",
};

/** Detection's copy of every text, each redacted differently from the event's. */
const DETECTION: Detection = {
  flags: [],
  domains: [],
  arguments: '{"command":"echo [R1]"}',
  result: "[R2]",
  texts: {
    errorMessage: "failed with [R3]",
    errorType: "type [R4]",
    toolDescription: "runs [R5]",
    agentName: "agent [R6]",
    mcpServerName: "mcp [R7]",
    mcpServerScope: "scope [R8]",
    cwd: "/home/[R9]",
  },
};

const WHO = { id: "row-1", orgId: "org-1", actorId: "actor-1", seq: 99 };

Deno.test("a tool call's row holds each event field in its column, redacted texts as detection returns them", () => {
  assert.deepEqual(toolCallRow(WHO, CALL, DETECTION), {
    id: "row-1",
    org_id: "org-1",
    seq: 99,
    session_id: "s-1",
    actor_id: "actor-1",
    ts: 1_700_000_000_123,
    tool_name: "Bash",
    tool_type: "builtin",
    category: "code_exec",
    outcome: "error",
    duration_ms: 42,
    result_size_bytes: 7,
    agent_system: "claude-code",
    agent_version: "2.1.0",
    model: "claude-x",
    error_message: "failed with [R3]",
    error_type: "type [R4]",
    decision: "accept",
    decision_source: "config",
    prompt_id: "p-1",
    agent_name: "agent [R6]",
    provider_name: "anthropic",
    tool_call_id: "call-1",
    tool_use_id: "toolu-1",
    tool_description: "runs [R5]",
    source: "otlp_logs",
    arguments: '{"command":"echo [R1]"}',
    result: "[R2]",
    mcp_server_name: "mcp [R7]",
    mcp_server_scope: "scope [R8]",
    os_type: "linux",
    host_arch: "amd64",
    terminal_type: "xterm",
    cwd: "/home/[R9]",
    trace_id: "t-1",
    span_id: "sp-1",
  });
});

Deno.test("a field the call lacks is null in its column, and no column is left out", () => {
  const bare: PendingCall = {
    sessionId: "s-2",
    timeMs: 5,
    agentSystem: "codex",
    agentVersion: "",
    toolName: "shell",
    toolType: "builtin",
    category: "other",
    outcome: "rejected",
    durationMs: null,
    resultSizeBytes: null,
    source: "otlp_traces",
  };
  const row = toolCallRow(WHO, bare, { flags: [], domains: [] });
  assert.deepEqual(Object.keys(row), TOOL_CALLS.names, "every column, in column order");
  const filled = ["id", "org_id", "seq", "session_id", "actor_id", "ts", "tool_name"];
  filled.push("tool_type", "category", "outcome", "agent_system", "agent_version", "source");
  for (const [column, value] of Object.entries(row)) {
    if (!filled.includes(column)) assert.equal(value, null, column);
  }
  assert.equal(row.agent_version, "");
});
