/**
 * The API's expected view of a Gemini CLI run, as the scenarios build it:
 * the fields every call carries (Gemini reports no agent version, model or
 * call id), a call that ran and succeeded, and the run's one session with
 * the cost row at the mock's fixed usage.
 *
 * @module
 */
import { GEMINI_MODEL, GEMINI_USAGE } from "./_gemini_mock.ts";
import type { ExpectedRun, ExpectedSession } from "./_scenario.ts";

/** Gemini CLI's `service.name`. */
const GEMINI_AGENT_SYSTEM = "gemini-cli";

/** Fields every call of a run shares: Gemini reports no agent version, model or call id. */
export const EVERY_CALL = {
  "agent_system": GEMINI_AGENT_SYSTEM,
  "agent_version": null,
  "tool_type": "builtin",
  model: null,
  "tool_call_id": null,
  source: "otlp_logs",
};

/** A call that ran and succeeded, accepted by the approval mode. */
export function okCall(toolName: string, category: string): Record<string, unknown> {
  return {
    ...EVERY_CALL,
    "tool_name": toolName,
    category,
    outcome: "ok",
    success: true,
    decision: "accept",
    "decision_source": null,
    "error_message": null,
  };
}

/**
 * The view of a run: its one session (no agent version or model reported,
 * no cost: the mock model has no price) and `responses` responses of the
 * mock's usage.
 */
export function geminiRun(session: ExpectedSession, responses: number): ExpectedRun {
  return {
    agentSystem: GEMINI_AGENT_SYSTEM,
    sessions: [{
      ...session,
      fields: {
        "agent_system": GEMINI_AGENT_SYSTEM,
        "agent_version": "",
        model: "",
        "cost_usd": 0,
        ...session.fields,
      },
    }],
    cost: [{
      "provider_name": "",
      model: GEMINI_MODEL,
      "input_tokens": responses * (GEMINI_USAGE.prompt - GEMINI_USAGE.cached),
      "output_tokens": responses * (GEMINI_USAGE.candidates + GEMINI_USAGE.thoughts),
      "cost_usd": 0,
      "call_count": responses,
    }],
  };
}
