/**
 * The metric points ingest keeps and the store writes (issue #18,
 * docs/ingest-mapping.md): what each measures, broken down by which
 * dimensions, from which agent.
 *
 * @module
 */
import type { TelemetryAgent } from "../agents.ts";

/** The agents whose instruments we know; `genai` is any other sender of GenAI semconv metrics. */
export type MetricAgent = TelemetryAgent;

/**
 * What a kept point measures. Counts are whole; `active_time_s` is seconds,
 * `cost_usd` US dollars. A turn is one user prompt and all the model
 * requests and tool calls the agent makes to answer it.
 */
export type Measure =
  | "sessions"
  | "turns"
  | "active_time_s"
  | "lines"
  | "commits"
  | "pull_requests"
  | "edit_decisions"
  | "cost_usd"
  | "tokens"
  | "tool_calls"
  | "model_requests"
  | "file_operations";

/**
 * The few attributes a measure is broken down by: `type` (lines added /
 * removed, active time user / cli, token kind, file operation), `model`,
 * `tool`, `decision` (accept / reject) and `language`.
 */
export type Dimension = "type" | "model" | "tool" | "decision" | "language";

/** One kept point: what the store writes, less the sender (organization, actor). */
export interface MetricSample {
  agent: MetricAgent;
  /** Resource `service.name` as sent. */
  agentSystem: string;
  /** `app.version`, else `service.version` (not Gemini's: its Node version); `""` when unknown. */
  agentVersion: string;
  /** The agent's session id, `""` when the point names none. */
  sessionId: string;
  instrument: string;
  measure: Measure;
  /** The measure's dimensions, `""` where the point has none. */
  dimensions: Record<Dimension, string>;
  temporality: "delta" | "cumulative";
  /** A decrease of a monotonic cumulative series is a restart, not a negative delta. */
  monotonic: boolean;
  /** Null when the point has none (a cumulative series then counts from an unknown start). */
  startTimeNs: bigint | null;
  timeNs: bigint;
  /** `timeNs` in whole milliseconds, for windows. */
  timeMs: number;
  /** In the measure's unit; the cumulative total for cumulative points. */
  value: number;
  /** The series within its sender: a digest of its resource, scope, metric and point attributes. */
  seriesKey: string;
}
