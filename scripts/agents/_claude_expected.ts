/**
 * The API's expected view of a Claude Code run, as the scenarios build it:
 * the fields every call carries, the decisions and outcomes they share, and
 * the run's one session with its cost at the mock's fixed usage.
 *
 * @module
 */
import { CLAUDE_MODEL } from "./_claude_client.ts";
import { CLAUDE_USAGE } from "./_claude_mock.ts";
import type { ExpectedRun, ExpectedSession, ExpectedToolCall, Variant } from "./_scenario.ts";

/**
 * Cost Claude Code reports per response for {@link CLAUDE_USAGE} on Sonnet 4.5
 * ($3 input, $15 output, $0.30 cache read, $3.75 cache write per million tokens):
 * 0.003 + 0.003 + 0.0006 + 0.0015.
 */
export const CLAUDE_COST_PER_CALL = 0.0081;

/** A tool call allowed by a rule of the user's settings.json (reported as `user_permanent`). */
export const ACCEPTED = { decision: "accept", "decision_source": "user_permanent" };
/** An allowed tool call that succeeded. */
export const OK = { outcome: "ok", success: true, ...ACCEPTED };
/**
 * A Bash command that exited non-zero: Claude Code reports no exit code, only
 * this (with OTEL_LOG_TOOL_DETAILS=1).
 */
export const SHELL_FAILED = {
  outcome: "error",
  success: false,
  "error_message": "Shell command failed",
  "error_type": "ShellError",
};

/** How many of a session's calls succeeded and failed, and the model requests of the run. */
export interface ClaudeCounts {
  successes: number;
  errors: number;
  modelCalls: number;
}

/** The expected view of one run of a variant at a client version. */
export class ClaudeView {
  readonly version: string;
  /** Whether the variant turns the beta traces on. */
  readonly traced: boolean;

  constructor(variant: Variant, version: string) {
    this.version = version;
    this.traced = variant.env.OTEL_TRACES_EXPORTER === "otlp";
  }

  /**
   * An expected tool call: the fields every call of the run carries (with
   * traces on, every call's `claude_code.tool` span adds its ids), then `fields`.
   */
  call(
    fields: Record<string, unknown>,
    more: Omit<ExpectedToolCall, "fields"> = {},
  ): ExpectedToolCall {
    return {
      fields: {
        "agent_system": "claude-code",
        "agent_version": this.version,
        "os_type": "linux",
        ...(this.traced ? {} : { "trace_id": null, "span_id": null }),
        ...fields,
      },
      present: this.traced ? ["trace_id", "span_id"] : [],
      ...more,
    };
  }

  /**
   * The run's one session and its cost row: `counts.modelCalls` responses of
   * the mock's usage, at {@link CLAUDE_COST_PER_CALL} each.
   */
  run(
    session: Omit<ExpectedSession, "fields">,
    { successes, errors, modelCalls }: ClaudeCounts,
  ): ExpectedRun {
    const cost = round(modelCalls * CLAUDE_COST_PER_CALL);
    return {
      agentSystem: "claude-code",
      sessions: [{
        fields: {
          "agent_system": "claude-code",
          "agent_version": this.version,
          "tool_call_count": session.toolCalls.length,
          "success_count": successes,
          "error_count": errors,
          "cost_usd": cost,
        },
        ...session,
      }],
      cost: [{
        "provider_name": "anthropic",
        model: CLAUDE_MODEL,
        "call_count": modelCalls,
        "input_tokens": modelCalls * CLAUDE_USAGE.input_tokens,
        "output_tokens": modelCalls * CLAUDE_USAGE.output_tokens,
        "cost_usd": cost,
      }],
    };
  }
}

function round(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}
