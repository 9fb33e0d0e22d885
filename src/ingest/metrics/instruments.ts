/**
 * The agents' metric instruments we keep, as data: which productivity
 * measure each one reports and which of its point attributes name the
 * measure's dimensions. An instrument not listed here is counted, never
 * stored. Checked against the recorded real runs
 * (`tests/fixtures/agents/real/*`), which win over the agents' docs.
 *
 * @module
 */
import type { Dimension, Measure, MetricAgent } from "../../model/metrics.ts";

export type { Dimension, Measure, MetricAgent };

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

/**
 * One instrument of an agent's group: a sum read by its value unless it says
 * otherwise, checked where its group was unless it says where.
 */
type GroupedInstrument =
  & Omit<InstrumentSpec, "agent" | "kind" | "reads" | "checked">
  & Partial<Pick<InstrumentSpec, "kind" | "reads" | "checked">>;

/** The instruments of one agent, checked against `checked` unless one says otherwise. */
function instrumentsOf(
  agent: MetricAgent,
  checked: string,
  instruments: readonly GroupedInstrument[],
): InstrumentSpec[] {
  return instruments.map((instrument) => ({
    agent,
    kind: "sum",
    reads: "value",
    checked,
    ...instrument,
  }));
}

/** Every instrument we keep. */
export const INSTRUMENTS: readonly InstrumentSpec[] = [
  // Claude Code: delta sums; session.id and user.id on every point.
  ...instrumentsOf("claude-code", CLAUDE, [
    {
      instrument: "claude_code.session.count",
      measure: "sessions",
      dimensions: { type: ["start_type"] },
    },
    {
      instrument: "claude_code.lines_of_code.count",
      measure: "lines",
      dimensions: { type: ["type"], model: ["model"] },
    },
    {
      instrument: "claude_code.commit.count",
      measure: "commits",
      dimensions: {},
      checked: "Claude Code monitoring docs (the recorded run makes no commit)",
    },
    {
      instrument: "claude_code.pull_request.count",
      measure: "pull_requests",
      dimensions: {},
      checked: "Claude Code monitoring docs (the recorded run opens no pull request)",
    },
    { instrument: "claude_code.cost.usage", measure: "cost_usd", dimensions: { model: ["model"] } },
    {
      instrument: "claude_code.token.usage",
      measure: "tokens",
      dimensions: { type: ["type"], model: ["model"] },
      values: { type: TOKEN_TYPES },
    },
    {
      instrument: "claude_code.code_edit_tool.decision",
      measure: "edit_decisions",
      dimensions: { tool: ["tool_name", "tool"], decision: ["decision"], language: ["language"] },
    },
    {
      instrument: "claude_code.active_time.total",
      measure: "active_time_s",
      dimensions: { type: ["type"] },
    },
  ]),
  // Gemini CLI: cumulative sums, one start time per series; session.id on resource and points.
  ...instrumentsOf("gemini-cli", GEMINI, [
    { instrument: "gemini_cli.session.count", measure: "sessions", dimensions: {} },
    {
      instrument: "gemini_cli.lines.changed",
      measure: "lines",
      dimensions: { type: ["type"], tool: ["function_name"] },
    },
    {
      instrument: "gemini_cli.file.operation.count",
      measure: "file_operations",
      dimensions: { type: ["operation"], language: ["programming_language"] },
    },
    {
      instrument: "gemini_cli.tool.call.count",
      measure: "tool_calls",
      dimensions: { tool: ["function_name"], decision: ["decision"] },
    },
    {
      instrument: "gemini_cli.token.usage",
      measure: "tokens",
      dimensions: { type: ["type"], model: ["model"] },
      values: { type: TOKEN_TYPES },
    },
    {
      instrument: "gemini_cli.api.request.count",
      measure: "model_requests",
      dimensions: { model: ["model"] },
    },
  ]),
  // Codex: delta sums and histograms, scope `codex`, ~50 instruments per run (startup, skills,
  // sqlite, shell snapshots: not kept). No point or resource names the session or conversation.
  // `model` on every point of a thread.
  ...instrumentsOf("codex", CODEX, [
    { instrument: "codex.thread.started", measure: "sessions", dimensions: { model: ["model"] } },
    {
      instrument: "codex.conversation.turn.count",
      measure: "turns",
      dimensions: { model: ["model"] },
    },
    {
      instrument: "codex.api_request",
      measure: "model_requests",
      dimensions: { model: ["model"] },
    },
    // One series per tool, command category and `success` (false for exec-policy refusals).
    {
      instrument: "codex.tool.call",
      measure: "tool_calls",
      dimensions: { tool: ["tool"], model: ["model"] },
    },
    // One sample per turn and token kind, OpenAI's semantics as sent: `input` includes
    // `cached_input`, `output` includes `reasoning_output`, `total` is input + output.
    {
      instrument: "codex.turn.token_usage",
      kind: "histogram",
      measure: "tokens",
      reads: "sum",
      dimensions: { type: ["token_type"], model: ["model"] },
      values: { type: TOKEN_TYPES },
    },
  ]),
  // Any other sender of the GenAI semantic conventions.
  ...instrumentsOf(
    "genai",
    "OpenTelemetry GenAI semantic conventions; Gemini CLI's recorded points",
    [
      {
        instrument: "gen_ai.client.token.usage",
        kind: "histogram",
        measure: "tokens",
        reads: "sum",
        dimensions: {
          type: ["gen_ai.token.type"],
          model: ["gen_ai.response.model", "gen_ai.request.model"],
        },
        values: { type: TOKEN_TYPES },
      },
    ],
  ),
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
