/**
 * The columns the ingest write path fills, one list per table, in the order
 * the statements name them. Everything that depends on that order derives
 * from these lists: each engine's insert statements (the column names and
 * placeholders that `{{<table>.columns}}` and `{{<table>.params}}` stand for
 * in `sql/<engine>/ingest.sql`), the row types the ingest logic builds, and
 * the positional values the engines bind. A row is built by column name, so
 * a new column is added here, in the migrations, and where its rows are built.
 *
 * @module
 */

/**
 * How a column's value is typed: text, integer or real; `?` when it may be
 * null. `int64` is a signed 64-bit integer past 2^53 (nanosecond times), bound
 * as its decimal text, which both engines store as an integer.
 */
export type ColumnKind = "text" | "text?" | "int" | "int?" | "int64" | "int64?" | "real?";

/** The value a column of a kind holds. */
export type ColumnValue<K extends ColumnKind> = K extends "text" ? string
  : K extends "text?" ? string | null
  : K extends "int" ? number
  : K extends "int64" ? string
  : K extends "int64?" ? string | null
  : number | null;

/** A table's columns and their kinds, in column order. */
export type ColumnSpec = Readonly<Record<string, ColumnKind>>;

/** A row of a table by column name. */
export type RowOf<S extends ColumnSpec> = { -readonly [C in keyof S]: ColumnValue<S[C]> };

/** Any column's value, as the engines bind it. */
export type BoundValue = string | number | null;

/** One table's column list and what derives from it. */
export interface TableColumns<S extends ColumnSpec> {
  readonly table: string;
  /** Column names in order. */
  readonly names: readonly (keyof S & string)[];
  /** Column kinds in the order of {@link names}. */
  readonly kinds: readonly ColumnKind[];
  /** The row's values in column order: the positional parameters of the insert statements. */
  values(row: RowOf<S>): BoundValue[];
}

/**
 * A table's column list. `values` is compiled once from the names (a plain
 * array literal of property reads): binding a row costs no more than the
 * hand-written positional tuple it replaces, which a loop over the names
 * did not (about 1–3 µs a row more, measured).
 */
export function tableColumns<const S extends ColumnSpec>(table: string, spec: S): TableColumns<S> {
  const names = Object.keys(spec) as (keyof S & string)[];
  for (const name of [table, ...names]) {
    if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`Invalid column name: "${name}"`);
  }
  const values = new Function(
    "row",
    `return [${names.map((name) => `row.${name}`).join(", ")}];`,
  ) as (row: RowOf<S>) => BoundValue[];
  return { table, names, kinds: names.map((name) => spec[name]!), values };
}

/** The columns a tool call's and a model call's rows start with: whose call, when, and its seq. */
const CALL_COLUMNS = {
  id: "text",
  org_id: "text",
  seq: "int",
  session_id: "text",
  actor_id: "text",
  ts: "int",
} as const;

/** `tool_calls`: one row per tool call. */
export const TOOL_CALLS = tableColumns("tool_calls", {
  ...CALL_COLUMNS,
  tool_name: "text",
  tool_type: "text",
  category: "text",
  outcome: "text",
  duration_ms: "int?",
  result_size_bytes: "int?",
  agent_system: "text",
  agent_version: "text",
  model: "text?",
  error_message: "text?",
  error_type: "text?",
  decision: "text?",
  decision_source: "text?",
  prompt_id: "text?",
  agent_name: "text?",
  provider_name: "text?",
  tool_call_id: "text?",
  tool_use_id: "text?",
  tool_description: "text?",
  source: "text",
  arguments: "text?",
  result: "text?",
  mcp_server_name: "text?",
  mcp_server_scope: "text?",
  os_type: "text?",
  host_arch: "text?",
  terminal_type: "text?",
  cwd: "text?",
  trace_id: "text?",
  span_id: "text?",
});

/**
 * What else a `tool_calls` column takes part in beyond its insert, one entry
 * per column (typed: a column without an entry does not compile).
 * `tests/table_columns_test.ts` holds each place to it: the event field
 * whose cap (`TEXT_LIMITS`, `ingest/limits.ts`) bounds the column, the
 * columns detection may redact and `detect rescan` rewrites (both engines'
 * rescan statements, `rescan.ts`), and those a log and its span fill in
 * either order (both engines' annotate statements).
 */
export interface ToolCallColumnRole {
  /** The event field of `TEXT_LIMITS` that caps it; null for ids we make and numbers. */
  limit: string | null;
  /** Detection redacts secrets in it at ingest and `detect rescan` rewrites it. */
  rescanned?: true;
  /** A later log or span sets it on the stored call (decision from the log, ids from the span). */
  merged?: true;
}

const capped = (limit: string): ToolCallColumnRole => ({ limit });
const redacted = (limit: string): ToolCallColumnRole => ({ limit, rescanned: true });
const merged = (limit: string): ToolCallColumnRole => ({ limit, merged: true });
const ours: ToolCallColumnRole = { limit: null };

/** The role of each `tool_calls` column (see {@link ToolCallColumnRole}), in column order. */
export const TOOL_CALL_ROLES: Readonly<Record<keyof ToolCallRow, ToolCallColumnRole>> = {
  "id": ours,
  "org_id": ours,
  "seq": ours,
  "session_id": capped("sessionId"),
  "actor_id": ours,
  "ts": ours,
  "tool_name": capped("toolName"),
  "tool_type": ours,
  "category": ours,
  "outcome": ours,
  "duration_ms": ours,
  "result_size_bytes": ours,
  "agent_system": capped("agentSystem"),
  "agent_version": capped("agentVersion"),
  "model": capped("model"),
  "error_message": redacted("errorMessage"),
  "error_type": redacted("errorType"),
  "decision": merged("decision"),
  "decision_source": merged("decisionSource"),
  "prompt_id": capped("promptId"),
  "agent_name": redacted("agentName"),
  "provider_name": capped("providerName"),
  "tool_call_id": capped("toolCallId"),
  "tool_use_id": capped("toolUseId"),
  "tool_description": redacted("toolDescription"),
  "source": ours,
  "arguments": redacted("arguments"),
  "result": redacted("result"),
  "mcp_server_name": redacted("mcpServerName"),
  "mcp_server_scope": redacted("mcpServerScope"),
  "os_type": capped("osType"),
  "host_arch": capped("hostArch"),
  "terminal_type": capped("terminalType"),
  "cwd": redacted("cwd"),
  "trace_id": merged("traceId"),
  "span_id": merged("spanId"),
};

/** `model_calls`: one row per model request. */
export const MODEL_CALLS = tableColumns("model_calls", {
  ...CALL_COLUMNS,
  agent_system: "text",
  provider_name: "text",
  model: "text",
  input_tokens: "int",
  output_tokens: "int",
  cache_read_tokens: "int",
  cache_creation_tokens: "int",
  cost_usd: "real?",
  duration_ms: "int?",
  // Schema 12 (issue #33): the price table's estimate when the call reported no cost.
  estimated_cost_usd: "real?",
});

/** `risk_flags`: one row per flag detection raised on a call. */
export const RISK_FLAGS = tableColumns("risk_flags", {
  call_id: "text",
  flag: "text",
  org_id: "text",
  seq: "int",
  session_id: "text",
  ts: "int",
  tool_call_id: "text",
  tool_name: "text",
  evidence: "text",
});

/** `domain_hits`: one row per domain (and scheme) a call reached. */
export const DOMAIN_HITS = tableColumns("domain_hits", {
  call_id: "text",
  domain: "text",
  scheme: "text",
  org_id: "text",
  seq: "int",
  session_id: "text",
  ts: "int",
});

/** `sessions` as its first event creates it; the batch's changes update the rest. */
export const NEW_SESSIONS = tableColumns("sessions", {
  org_id: "text",
  session_id: "text",
  seq: "int",
  actor_id: "text",
  agent_system: "text",
  agent_version: "text",
});

/**
 * `metric_points`: one row per kept metric point (issue #18), by series,
 * start time and time; the dimensions are `""` where a point has none.
 */
export const METRIC_POINTS = tableColumns("metric_points", {
  id: "text",
  org_id: "text",
  seq: "int",
  actor_id: "text",
  agent: "text",
  agent_system: "text",
  agent_version: "text",
  session_id: "text",
  instrument: "text",
  measure: "text",
  type: "text",
  model: "text",
  tool: "text",
  decision: "text",
  language: "text",
  temporality: "text",
  monotonic: "int",
  series_id: "text",
  start_time_ns: "int64?",
  time_ns: "int64",
  ts: "int",
  value: "real?",
});

/** A row of a table, from its column list. */
export type TableRow<T> = T extends TableColumns<infer S> ? RowOf<S> : never;

/** A `tool_calls` row. */
export type ToolCallRow = TableRow<typeof TOOL_CALLS>;
/** A `model_calls` row. */
export type ModelCallRow = TableRow<typeof MODEL_CALLS>;
/** A `risk_flags` row. */
export type RiskFlagRow = TableRow<typeof RISK_FLAGS>;
/** A `domain_hits` row. */
export type DomainHitRow = TableRow<typeof DOMAIN_HITS>;
/** A new `sessions` row. */
export type NewSessionRow = TableRow<typeof NEW_SESSIONS>;
/** A `metric_points` row. */
export type MetricPointRow = TableRow<typeof METRIC_POINTS>;

/** The tables whose statements take their column lists from here. */
export const WRITE_TABLES: readonly TableColumns<ColumnSpec>[] = [
  TOOL_CALLS,
  MODEL_CALLS,
  RISK_FLAGS,
  DOMAIN_HITS,
  NEW_SESSIONS,
  METRIC_POINTS,
];

/**
 * The id columns SQLite's `calls` holds as integer keys in their place
 * (`{{<table>.keyed_columns}}`; sql/sqlite/telemetry_0015_keyed_calls.sql).
 */
export const KEYED_COLUMNS: Readonly<Record<string, string>> = {
  "org_id": "org_key",
  "session_id": "session_key",
  "actor_id": "actor_key",
  // A tool call's prompt (schema 18); model calls have none.
  "prompt_id": "prompt_key",
};

/**
 * Statements with their column lists filled in: `{{<table>.columns}}` becomes
 * the table's column names and `{{<table>.params}}` one placeholder per column,
 * as the engine writes it (`param(position, kind)`, position from 1);
 * `{{<table>.keyed_columns}}` the names with {@link KEYED_COLUMNS}' keys in
 * place of ids. A
 * placeholder naming no table here fails at start-up.
 */
export function withColumnLists(
  statements: Record<string, string>,
  param: (position: number, kind: ColumnKind) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, sql] of Object.entries(statements)) {
    out[name] = sql.replace(
      /\{\{(\w+)\.(columns|keyed_columns|params)\}\}/g,
      (_, table, what) => {
        const columns = WRITE_TABLES.find((t) => t.table === table);
        if (!columns) throw new Error(`No column list for table: "${table}" in "${name}"`);
        if (what === "columns") return columns.names.join(", ");
        if (what === "keyed_columns") {
          return columns.names.map((column) => KEYED_COLUMNS[column] ?? column).join(", ");
        }
        return columns.kinds.map((kind, i) => param(i + 1, kind)).join(", ");
      },
    );
    if (out[name]!.includes("{{")) throw new Error(`Unknown column placeholder in "${name}"`);
  }
  return out;
}
