/**
 * The agents' metric instruments we keep, as data: which productivity
 * measure each one reports and which of its point attributes name the
 * measure's dimensions. An instrument not listed here is counted, never
 * stored. Checked against the recorded real runs
 * (`tests/fixtures/agents/real/*`), which win over the agents' docs.
 *
 * @module
 */
import type { TelemetryAgent } from "../../agents.ts";

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

/** The dimensions in a fixed order (columns of the stored point). */
export const DIMENSIONS: readonly Dimension[] = ["type", "model", "tool", "decision", "language"];

/** One instrument we keep. */
export interface InstrumentSpec {
  agent: MetricAgent;
  /** The OTLP metric name. */
  instrument: string;
  /** The data type it must arrive as; another is unusable (a client changed it). */
  kind: "sum" | "histogram";
  measure: Measure;
  /** Which number of a point: a sum's value, or a histogram's `sum` or `count`. */
  reads: "value" | "sum" | "count";
  /** Point attribute names per dimension, the first present wins. */
  dimensions: Readonly<Partial<Record<Dimension, readonly string[]>>>;
  /** Canonical spellings of some values of a dimension; other values are kept as sent. */
  values?: Readonly<Partial<Record<Dimension, Readonly<Record<string, string>>>>>;
  /** Factor from the instrument's unit to the measure's. */
  scale?: number;
  /** Where this row was checked: a recording, else the client's source. */
  checked: string;
}

/** An instrument we recognise and deliberately do not keep. */
export interface SkippedInstrument {
  agent: MetricAgent;
  instrument: string;
  why: string;
}

const CLAUDE = "recorded claude-code-2.1.330 (http-json, http-protobuf, gRPC)";
const GEMINI = "recorded gemini-cli-0.61.0 (http JSON, gRPC gzip)";
const CODEX = "recorded codex-0.169.0 (http-json, http-protobuf)";

/** Token kinds in one spelling across agents. */
const TOKEN_TYPES: Readonly<Record<string, string>> = {
  input: "input",
  output: "output",
  cacheRead: "cache_read",
  cacheCreation: "cache_creation",
  cache: "cache_read",
  "cached_input": "cache_read",
  thought: "reasoning",
  "reasoning_output": "reasoning",
  "cache_write_input": "cache_creation",
  tool: "tool",
  total: "total",
};

/** Every instrument we keep. */
export const INSTRUMENTS: readonly InstrumentSpec[] = [
  // Claude Code: delta sums; session.id and user.id on every point.
  {
    agent: "claude-code",
    instrument: "claude_code.session.count",
    kind: "sum",
    measure: "sessions",
    reads: "value",
    dimensions: { type: ["start_type"] },
    checked: CLAUDE,
  },
  {
    agent: "claude-code",
    instrument: "claude_code.lines_of_code.count",
    kind: "sum",
    measure: "lines",
    reads: "value",
    dimensions: { type: ["type"], model: ["model"] },
    checked: CLAUDE,
  },
  {
    agent: "claude-code",
    instrument: "claude_code.commit.count",
    kind: "sum",
    measure: "commits",
    reads: "value",
    dimensions: {},
    checked: "Claude Code monitoring docs (the recorded run makes no commit)",
  },
  {
    agent: "claude-code",
    instrument: "claude_code.pull_request.count",
    kind: "sum",
    measure: "pull_requests",
    reads: "value",
    dimensions: {},
    checked: "Claude Code monitoring docs (the recorded run opens no pull request)",
  },
  {
    agent: "claude-code",
    instrument: "claude_code.cost.usage",
    kind: "sum",
    measure: "cost_usd",
    reads: "value",
    dimensions: { model: ["model"] },
    checked: CLAUDE,
  },
  {
    agent: "claude-code",
    instrument: "claude_code.token.usage",
    kind: "sum",
    measure: "tokens",
    reads: "value",
    dimensions: { type: ["type"], model: ["model"] },
    values: { type: TOKEN_TYPES },
    checked: CLAUDE,
  },
  {
    agent: "claude-code",
    instrument: "claude_code.code_edit_tool.decision",
    kind: "sum",
    measure: "edit_decisions",
    reads: "value",
    dimensions: { tool: ["tool_name", "tool"], decision: ["decision"], language: ["language"] },
    checked: CLAUDE,
  },
  {
    agent: "claude-code",
    instrument: "claude_code.active_time.total",
    kind: "sum",
    measure: "active_time_s",
    reads: "value",
    dimensions: { type: ["type"] },
    checked: CLAUDE,
  },
  // Gemini CLI: cumulative sums, one start time per series; session.id on resource and points.
  {
    agent: "gemini-cli",
    instrument: "gemini_cli.session.count",
    kind: "sum",
    measure: "sessions",
    reads: "value",
    dimensions: {},
    checked: GEMINI,
  },
  {
    agent: "gemini-cli",
    instrument: "gemini_cli.lines.changed",
    kind: "sum",
    measure: "lines",
    reads: "value",
    dimensions: { type: ["type"], tool: ["function_name"] },
    checked: GEMINI,
  },
  {
    agent: "gemini-cli",
    instrument: "gemini_cli.file.operation.count",
    kind: "sum",
    measure: "file_operations",
    reads: "value",
    dimensions: { type: ["operation"], language: ["programming_language"] },
    checked: GEMINI,
  },
  {
    agent: "gemini-cli",
    instrument: "gemini_cli.tool.call.count",
    kind: "sum",
    measure: "tool_calls",
    reads: "value",
    dimensions: { tool: ["function_name"], decision: ["decision"] },
    checked: GEMINI,
  },
  {
    agent: "gemini-cli",
    instrument: "gemini_cli.token.usage",
    kind: "sum",
    measure: "tokens",
    reads: "value",
    dimensions: { type: ["type"], model: ["model"] },
    values: { type: TOKEN_TYPES },
    checked: GEMINI,
  },
  {
    agent: "gemini-cli",
    instrument: "gemini_cli.api.request.count",
    kind: "sum",
    measure: "model_requests",
    reads: "value",
    dimensions: { model: ["model"] },
    checked: GEMINI,
  },
  // Codex: delta sums and histograms, scope `codex`, ~50 instruments per run (startup, skills,
  // sqlite, shell snapshots: not kept). No point or resource names the session or conversation.
  // `model` on every point of a thread.
  {
    agent: "codex",
    instrument: "codex.thread.started",
    kind: "sum",
    measure: "sessions",
    reads: "value",
    dimensions: { model: ["model"] },
    checked: CODEX,
  },
  {
    agent: "codex",
    instrument: "codex.conversation.turn.count",
    kind: "sum",
    measure: "turns",
    reads: "value",
    dimensions: { model: ["model"] },
    checked: CODEX,
  },
  {
    agent: "codex",
    instrument: "codex.api_request",
    kind: "sum",
    measure: "model_requests",
    reads: "value",
    dimensions: { model: ["model"] },
    checked: CODEX,
  },
  // One series per tool, command category and `success` (false for exec-policy refusals).
  {
    agent: "codex",
    instrument: "codex.tool.call",
    kind: "sum",
    measure: "tool_calls",
    reads: "value",
    dimensions: { tool: ["tool"], model: ["model"] },
    checked: CODEX,
  },
  // One sample per turn and token kind, OpenAI's semantics as sent: `input` includes
  // `cached_input`, `output` includes `reasoning_output`, `total` is input + output.
  {
    agent: "codex",
    instrument: "codex.turn.token_usage",
    kind: "histogram",
    measure: "tokens",
    reads: "sum",
    dimensions: { type: ["token_type"], model: ["model"] },
    values: { type: TOKEN_TYPES },
    checked: CODEX,
  },
  // Any other sender of the GenAI semantic conventions.
  {
    agent: "genai",
    instrument: "gen_ai.client.token.usage",
    kind: "histogram",
    measure: "tokens",
    reads: "sum",
    dimensions: {
      type: ["gen_ai.token.type"],
      model: ["gen_ai.response.model", "gen_ai.request.model"],
    },
    values: { type: TOKEN_TYPES },
    checked: "OpenTelemetry GenAI semantic conventions; Gemini CLI's recorded points",
  },
];

/** Instruments we know and do not keep, so they are counted apart from unknown ones. */
export const SKIPPED_INSTRUMENTS: readonly SkippedInstrument[] = [
  {
    agent: "gemini-cli",
    instrument: "gen_ai.client.token.usage",
    why: "the same tokens as gemini_cli.token.usage, without the cache and thought kinds",
  },
  {
    agent: "codex",
    instrument: "codex.turn.tool.call",
    why: "a histogram of tool calls per turn: the calls codex.tool.call counts",
  },
];

const byName = new Map<string, InstrumentSpec | SkippedInstrument>();
for (const entry of [...INSTRUMENTS, ...SKIPPED_INSTRUMENTS]) {
  byName.set(`${entry.agent}\u0000${entry.instrument}`, entry);
}

/** The spec of an agent's instrument, the reason it is skipped, or undefined when unknown. */
export function instrumentOf(
  agent: MetricAgent,
  instrument: string,
): InstrumentSpec | SkippedInstrument | undefined {
  return byName.get(`${agent}\u0000${instrument}`);
}
