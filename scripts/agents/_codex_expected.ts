/**
 * The API's expected view of a Codex run, as the scenarios build it: the
 * fields every call and session carries, the calls the exec policy let run,
 * and the cost row at the mock's fixed usage.
 *
 * @module
 */
import { CODEX_MODEL } from "./_codex_client.ts";
import { CODEX_USAGE } from "./_codex_mock.ts";
import type { ExpectedRun, ExpectedSession } from "./_scenario.ts";

/** Codex's `service.name` when run as `codex exec` (its originator). */
const CODEX_AGENT_SYSTEM = "codex_exec";

/** Fields every call and session of a run at `version` carries. */
function everyRecord(version: string): Record<string, unknown> {
  return {
    "agent_system": CODEX_AGENT_SYSTEM,
    "agent_version": version,
    model: CODEX_MODEL,
  };
}

/** Fields every call of a run at `version` carries (Codex reports calls in its logs only). */
export function codexCallFields(version: string): Record<string, unknown> {
  return { ...everyRecord(version), source: "otlp_logs", "tool_type": "builtin" };
}

/**
 * A builtin call the exec policy let run (`approved` by `config`); its
 * `arguments` are `input` JSON-encoded. A command that exits non-zero is an
 * `error` although Codex says success=true: the exit code in its output says so.
 */
export function approvedCall(
  version: string,
  callId: string,
  toolName: string,
  input: unknown,
  outcome: "ok" | "error" = "ok",
): Record<string, unknown> {
  return {
    ...codexCallFields(version),
    "tool_name": toolName,
    category: toolName === "apply_patch" ? "file_write" : "code_exec",
    "tool_call_id": callId,
    outcome,
    success: outcome === "ok",
    decision: "approved",
    "decision_source": "config",
    arguments: JSON.stringify(input),
  };
}

/** The view of a run at `version`: its sessions, and `responses` responses of the mock's usage. */
export function codexRun(
  version: string,
  sessions: ExpectedSession[],
  responses: number,
): ExpectedRun {
  return {
    agentSystem: CODEX_AGENT_SYSTEM,
    sessions: sessions.map((session) => ({
      ...session,
      fields: { ...everyRecord(version), "cost_usd": 0, ...session.fields },
    })),
    cost: [{
      "provider_name": "Mock Responses API",
      model: CODEX_MODEL,
      // The cached part of the input is taken out of it.
      "input_tokens": responses * (CODEX_USAGE.input - CODEX_USAGE.cached),
      "output_tokens": responses * CODEX_USAGE.output,
      "cost_usd": 0,
      "call_count": responses,
    }],
  };
}
