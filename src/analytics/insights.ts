/**
 * `/v1/insights/*` (docs/api.md §2.11, §4.8–4.16): the one registry of the insights
 * ({@link INSIGHTS}) — each one's SQL per engine (`sql/insights/<name>.sql`,
 * SQLite's own where it differs), the windows SQLite answers it in, the
 * filters its route takes, and the fields of its summary, series and
 * breakdown. Every list of insights (the spec's names, each engine's SQL,
 * the routes of `src/api/insights.ts`) derives from it. How they run on the
 * DuckDB replica is `insight_runner.ts`, on SQLite `sqlite_insights.ts`.
 *
 * @module
 */
import { roundStat, roundUsd } from "../round.ts";
import { parseNamedSql } from "../store/named_sql.ts";
import { formatTimestamp } from "../time.ts";
import activitySql from "../../sql/insights/activity.sql" with { type: "text" };
import activityDaysSql from "../../sql/insights/days/activity.sql" with { type: "text" };
import topToolsDaysSql from "../../sql/insights/days/top_tools.sql" with { type: "text" };
import costSql from "../../sql/insights/cost.sql" with { type: "text" };
import costDaysSql from "../../sql/insights/days/cost.sql" with { type: "text" };
import domainsSql from "../../sql/insights/domains.sql" with { type: "text" };
import outliersSql from "../../sql/insights/outliers.sql" with { type: "text" };
import sqliteOutliersSql from "../../sql/insights/sqlite/outliers.sql" with { type: "text" };
import productivitySql from "../../sql/insights/productivity.sql" with { type: "text" };
import riskSql from "../../sql/insights/risk.sql" with { type: "text" };
import topToolsSql from "../../sql/insights/top_tools.sql" with { type: "text" };
import type { ReplicaRow } from "./read_pool.ts";
import {
  bucketParams,
  type InsightWindow,
  wholeDays,
  type WindowName,
  windowObject,
} from "./window.ts";

/** The spec's six insights, by their path segment. */
export type InsightName = "activity" | "top-tools" | "outliers" | "cost" | "risk" | "domains";

/** Every insight served: the spec's and our extension (`productivity`, issue #18). */
export type AnyInsightName = InsightName | "productivity";

/**
 * How a result column becomes a JSON field: integers and numbers as JSON
 * numbers (null sums read as 0), `number?` keeps null, `time` is an epoch-ms
 * value written as RFC 3339, `bool` accepts SQLite's 0/1.
 */
/** `usd` is rounded to 1e-9 and `number`/`number?` to 1e-6 (see `src/round.ts`). */
/** `usd?` and `string?` keep null (a figure with no input, e.g. no cost reported). */
type FieldKind =
  | "int"
  | "number"
  | "number?"
  | "usd"
  | "usd?"
  | "string"
  | "string?"
  | "time"
  | "bool";
type Fields = Readonly<Record<string, FieldKind>>;

/** One insight: its SQL, where it runs, what its route takes and what it returns. */
export interface InsightDefinition {
  name: AnyInsightName;
  /** Its statements by section, as the DuckDB replica runs them (SQLite and PostgreSQL as well). */
  sql: Readonly<Record<string, string>>;
  /**
   * On the embedded store: SQLite's own statements where they differ
   * (`sql/insights/sqlite/`), and the windows answered from SQLite rather
   * than the replica (they measured faster there); null when SQLite never
   * runs it (an extension without a baseline).
   */
  sqlite: { sql?: Readonly<Record<string, string>>; windows: readonly WindowName[] } | null;
  /** Whether the spec defines it; the others are this project's extensions (docs/api.md). */
  spec: boolean;
  /**
   * Whether its route takes the `actor` and `team` of docs/api.md §4.2.1 and names each breakdown
   * row's actor.
   */
  actorFilters: boolean;
  summary: Fields;
  /** Null: the insight has no time series (`series: null`). */
  series: Fields | null;
  /** Null: the insight has no breakdown (`breakdown: null`). */
  breakdown: Fields | null;
  /** Rows of another statement nested into their breakdown row, as an array field. */
  nested?: NestedRows;
  /**
   * Summary, series and breakdown come from one statement, `rollup` (one pass
   * over the data with GROUPING SETS), its rows told apart by their `level`.
   */
  rollup?: Readonly<Record<"summary" | "series" | "breakdown", number>>;
  /**
   * Where its `groups` statement finds a row's actor and agent: its own
   * columns, or `"call"`: the tool call its `call_id` names.
   */
  groupColumns: { actor: string; agent: string } | "call";
  /**
   * On the replica, its statements over the per-day rollups (issue #31,
   * `sql/insights/days/`), which answer byte for byte what the raw-row
   * statements `sql` answer; without, it always reads raw rows.
   */
  days?: DayRollups;
}

/** An insight's statements over the replica's per-day rollups (`sql/duckdb/replica_days.sql`). */
export interface DayRollups {
  /** Section by section, as `sql`; each opened by the `rows` statement (the CTE they read). */
  sql: Readonly<Record<string, string>>;
  /**
   * Whether the rollups keep each row's session: without it, a request
   * narrowed by `dim.` filters or grouped by `dim.<key>` reads raw rows.
   */
  sessions: boolean;
}

/** A statement whose rows become a field of the breakdown row with the same key. */
export interface NestedRows {
  /** The breakdown row's field that holds them (`[]` when none). */
  field: string;
  section: "decisions";
  /** Columns naming the breakdown row; not repeated in the nested rows. */
  key: readonly string[];
  fields: Fields;
}

/**
 * Narrowing filters of the insights that take them (docs/api.md §4.2.1's `actor`
 * and `team`; productivity only). Both given: both apply.
 */
export interface InsightFilters {
  actor?: string;
  /** Actor ids, sorted, without duplicates (`teamParam`). */
  team?: readonly string[];
  /**
   * The `dim.<key>=<value>` filters (docs/api.md §4.22), sorted `[key, value]`
   * pairs (`dimParams`): what the cache keys a narrowed answer on.
   */
  dims?: readonly (readonly [string, string])[];
  /**
   * The sessions `dims` select, read from the store at the request: given,
   * every insight counts only their rows (empty: nothing).
   */
  sessions?: readonly string[];
}

/** What `group_by` may name (docs/api.md §4.23): `dim.<key>` for a configured key. */
export type GroupBy = "actor" | "agent" | `dim.${string}`;

/** The most groups an answer holds (docs/api.md §4.23): the biggest, `groups_truncated` says when more. */
export const MAX_GROUPS = 100;

/** One summary per group of an insight (docs/api.md §4.23). */
export interface InsightGrouping {
  by: GroupBy;
  /**
   * For `dim.<key>` on the replica: every session of the organization with
   * the key and, at the same index in `values`, its value, read from the
   * store at the request (SQLite reads its own table instead).
   */
  sessions?: readonly string[];
  values?: readonly string[];
}

/** The engines that run insight SQL: the replica, or the SQLite store itself. */
export type InsightEngine = "duckdb" | "sqlite";

/** Where a `groups` statement selects its group's value, and joins what holds it. */
const GROUP_VALUE_MARKER = "/*group_value*/";
const GROUP_JOIN_MARKER = "/*group_join*/";

/**
 * Each session's dimension value: on the replica, the `[session, value]`
 * pairs read from the store, bound as one JSON text (binding them as two
 * lists took twice as long at 20,000 sessions); SQLite reads its own table.
 */
const DIMENSION_GROUP_JOIN: Readonly<Record<InsightEngine, string>> = {
  duckdb: "LEFT JOIN (SELECT pair[1] AS group_session, pair[2] AS group_value " +
    `FROM (SELECT unnest(from_json($group_pairs, '[["VARCHAR"]]')) AS pair)) AS group_of ` +
    "ON group_of.group_session = session_id",
  sqlite: "LEFT JOIN (SELECT session_id AS group_session, value AS group_value " +
    "FROM session_dimensions WHERE org_id = $org AND key = $group_key) AS group_of " +
    "ON group_of.group_session = session_id",
};

/** A flag's or a hit's actor or agent: its tool call's (same time as the call). */
function callGroupJoin(column: string): string {
  return `LEFT JOIN (SELECT id AS group_call, nullif(${column}, '') AS group_value ` +
    "FROM tool_calls WHERE org_id = $org AND ts >= $start AND ts < $end) AS group_of " +
    "ON group_of.group_call = call_id";
}

/** The group's value and join of one insight's `groups` statement. */
function groupSplice(
  definition: InsightDefinition,
  by: GroupBy,
  engine: InsightEngine,
): { value: string; join: string } {
  if (by.startsWith("dim.")) {
    return { value: "group_of.group_value", join: DIMENSION_GROUP_JOIN[engine] };
  }
  const { groupColumns } = definition;
  const role = by as "actor" | "agent";
  if (groupColumns === "call") {
    return {
      value: "group_of.group_value",
      join: callGroupJoin(role === "actor" ? "actor_id" : "agent_system"),
    };
  }
  // An empty actor or agent is no value: the null group.
  return { value: `nullif(${groupColumns[role]}, '')`, join: "" };
}

/** Where a statement's reads take {@link InsightFilters.sessions} (`sql/insights/*.sql`). */
const SESSIONS_MARKER = "/*sessions*/";

/** The predicate {@link SESSIONS_MARKER} becomes when the sessions are given. */
const SESSIONS_PREDICATE = "AND session_id IN (SELECT unnest($sessions))";

/** An insight response body (docs/api.md §2.11). */
export interface InsightBody {
  window: ReturnType<typeof windowObject>;
  summary: Record<string, unknown>;
  series: Record<string, unknown>[] | null;
  breakdown: Record<string, unknown>[] | null;
  /** With `group_by` only (docs/api.md §4.23). */
  "group_by"?: GroupBy;
  groups?: InsightGroup[];
  "groups_truncated"?: boolean;
}

/** One group's summary (`label`: an actor's name, added by the route). */
export interface InsightGroup {
  value: string | null;
  label?: string;
  summary: Record<string, unknown>;
}

/** What productivity counts, per bucket: counts only, `cost_usd` null when none reported. */
const PRODUCTIVITY_SERIES: Fields = {
  "sessions": "int",
  "active_time_user_s": "number",
  "active_time_cli_s": "number",
  "lines_added": "number",
  "lines_removed": "number",
  "commits": "number",
  "pull_requests": "number",
  "edits_accepted": "number",
  "edits_rejected": "number",
  "cost_usd": "usd?",
  // Issue #33: the estimate of model calls that reported no cost; null when none was estimated.
  "estimated_cost_usd": "usd?",
};

/** Productivity's counts in the summary and breakdown: the series' and where lines came from. */
const PRODUCTIVITY_COUNTS: Fields = { ...PRODUCTIVITY_SERIES, "lines_source": "string?" };

/** Productivity's ratios, null where an input is missing. */
const PRODUCTIVITY_RATIOS: Fields = {
  "acceptance_rate": "number?",
  "cost_per_1k_lines": "usd?",
  "cost_per_commit": "usd?",
};

/** The tokens cost counts in its summary, series and breakdown alike. */
const TOKENS: Fields = { "input_tokens": "int", "output_tokens": "int" };

/**
 * Risk over 7 and 30 days is answered from SQLite on the embedded store: it
 * reads only its window's flags from `risk_flags_by_time` (migration 8), 7d in
 * 2.5 ms and 30d in 6.7 ms on the reader threads, against 67 and 71 ms on the
 * replica over HTTP (1M calls, 2 cores, a new export before each request,
 * catch-up included). At 90d nearly every flag is in the window and the
 * replica's columnar scan wins as the store grows.
 */
const RISK_ON_SQLITE = { windows: ["7d", "30d"] } as const;

/**
 * One of the spec's insights: its statements (`sql/insights/<name>.sql`),
 * SQLite's own and the windows SQLite answers where `sqlite` says, and no
 * actor or team filters.
 */
function specInsight(
  sql: string,
  fields: Pick<InsightDefinition, "summary" | "series" | "breakdown">,
  sqlite: InsightDefinition["sqlite"] = { windows: [] },
  groupColumns: InsightDefinition["groupColumns"] = OWN_ACTOR_AND_AGENT,
): Omit<InsightDefinition, "name"> {
  return {
    spec: true,
    sql: parseNamedSql(sql),
    sqlite,
    actorFilters: false,
    groupColumns,
    ...fields,
  };
}

/** Rows that carry their actor and agent (tool calls, model calls). */
const OWN_ACTOR_AND_AGENT = { actor: "actor_id", agent: "agent_system" } as const;

/** The registry's definitions, each named by its key (in the same order). */
function namedByKey(
  definitions: Record<AnyInsightName, Omit<InsightDefinition, "name">>,
): Record<AnyInsightName, InsightDefinition> {
  const named = {} as Record<AnyInsightName, InsightDefinition>;
  for (const [key, definition] of Object.entries(definitions)) {
    const name = key as AnyInsightName;
    named[name] = { name, ...definition };
  }
  return named;
}

/** Statements over the per-day rollups, each opened by the CTE of `rows`. */
function dayRollups(sql: string, sessions: boolean): DayRollups {
  return { sql: withPrelude(parseNamedSql(sql), "rows"), sessions };
}

/** The registry: every insight served, the spec's six in the spec's order, then the extensions. */
export const INSIGHTS: Readonly<Record<AnyInsightName, InsightDefinition>> = namedByKey({
  "activity": {
    ...specInsight(activitySql, {
      summary: { "total_calls": "int", "error_count": "int", "session_count": "int" },
      series: { "bucket": "time", "calls": "int", "errors": "int" },
      breakdown: null,
    }),
    days: dayRollups(activityDaysSql, true),
  },
  "top-tools": {
    ...specInsight(topToolsSql, {
      summary: { "total_calls": "int", "unique_tools": "int" },
      series: null,
      breakdown: {
        "tool_name": "string",
        "tool_type": "string",
        "calls": "int",
        "errors": "int",
        "avg_duration_ms": "number?",
      },
    }),
    days: dayRollups(topToolsDaysSql, false),
  },
  "outliers": specInsight(outliersSql, {
    summary: { "p95_call_count": "number", "outlier_count": "int", "session_count": "int" },
    series: null,
    breakdown: {
      "session_id": "string",
      "call_count": "int",
      "first_seen": "time",
      "last_seen": "time",
      "agent_system": "string",
      "model": "string",
      "error_count": "int",
    },
  }, { sql: parseNamedSql(sqliteOutliersSql), windows: [] }),
  "cost": {
    ...specInsight(costSql, {
      summary: {
        ...TOKENS,
        "cache_read_tokens": "int",
        "cache_creation_tokens": "int",
        "cost_usd": "usd",
        "cost_available": "bool",
        "estimated_cost_usd": "usd",
        "call_count": "int",
      },
      series: { "bucket": "time", ...TOKENS, "cost_usd": "usd", "estimated_cost_usd": "usd" },
      breakdown: {
        "provider_name": "string",
        "model": "string",
        ...TOKENS,
        "cost_usd": "usd",
        "estimated_cost_usd": "usd",
        "call_count": "int",
      },
    }),
    days: dayRollups(costDaysSql, false),
  },
  "risk": specInsight(
    riskSql,
    {
      summary: { "total_flags": "int", "sessions_flagged": "int", "distinct_flag_kinds": "int" },
      series: { "bucket": "time", "flag": "string", "flags": "int" },
      breakdown: { "flag": "string", "flags": "int", "sessions": "int", "tools": "int" },
    },
    RISK_ON_SQLITE,
    "call",
  ),
  "domains": specInsight(
    domainsSql,
    {
      summary: { "total_hits": "int", "unique_domains": "int", "sessions": "int" },
      series: { "bucket": "time", "hits": "int", "unique_domains": "int" },
      breakdown: { "domain": "string", "scheme": "string", "hits": "int", "sessions": "int" },
    },
    { windows: [] },
    "call",
  ),
  "productivity": {
    spec: false,
    sql: withPrelude(parseNamedSql(productivitySql), "facts"),
    sqlite: null,
    actorFilters: true,
    groupColumns: { actor: "actor_id", agent: "agent" },
    summary: { ...PRODUCTIVITY_COUNTS, ...PRODUCTIVITY_RATIOS },
    series: { "bucket": "time", ...PRODUCTIVITY_SERIES },
    breakdown: {
      "actor_id": "string",
      "agent": "string",
      ...PRODUCTIVITY_COUNTS,
      ...PRODUCTIVITY_RATIOS,
    },
    rollup: { summary: 7, series: 3, breakdown: 4 },
    nested: {
      field: "decisions",
      section: "decisions",
      key: ["actor_id", "agent"],
      fields: {
        "tool": "string",
        "language": "string",
        "accepted": "number",
        "rejected": "number",
      },
    },
  },
});

/** Each statement of `sql` but `prelude` opened by it (the WITH clause they share). */
function withPrelude(sql: Record<string, string>, prelude: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, text] of Object.entries(sql)) {
    if (name !== prelude) out[name] = `${sql[prelude]}\n${text}`;
  }
  return out;
}

/** A section of an insight and its SQL with the parameters it names. */
export interface InsightStatement {
  section: "summary" | "series" | "breakdown" | "rollup" | "decisions" | "groups";
  sql: string;
  /** A list is the dimension filters' sessions (bound as `VARCHAR[]`). */
  params: Record<string, string | number | readonly string[]>;
}

/** The statements of one insight for one organization and window, in section order. */
function insightStatements(
  definition: InsightDefinition,
  sql: Readonly<Record<string, string>>,
  engine: InsightEngine,
  { orgId, window, filters = {}, grouping }: InsightRequest,
  daysThrough: number | null,
): InsightStatement[] {
  const { width, offset } = bucketParams(window.granularity);
  // Raw-row statements name neither; no day rolled up: every row is raw.
  const { dayLo, dayHi } = wholeDays(window, daysThrough ?? -Infinity);
  const values: Record<string, string | number | readonly string[]> = {
    org: orgId,
    start: window.start,
    end: window.end,
    "day_lo": dayLo,
    "day_hi": dayHi,
    width,
    offset,
    // Team ids never hold a comma (the parameter is split on commas).
    actor: filters.actor ?? "",
    team: (filters.team ?? []).join(","),
    sessions: filters.sessions ?? [],
    "group_limit": MAX_GROUPS + 1,
    "group_key": grouping?.by.startsWith("dim.") ? grouping.by.slice("dim.".length) : "",
    "group_pairs": JSON.stringify(
      (grouping?.sessions ?? []).map((session, i) => [session, grouping!.values![i]]),
    ),
  };
  const sections: InsightStatement["section"][] = definition.rollup !== undefined
    ? ["rollup"]
    : (["summary", "series", "breakdown"] as const)
      .filter((section) => section === "summary" || definition[section] !== null);
  if (definition.nested !== undefined) sections.push(definition.nested.section);
  if (grouping !== undefined) sections.push("groups");
  return sections.map((section) => {
    let text = narrowed(sql[section], filters.sessions);
    if (section === "groups" && text !== undefined) {
      const { value, join } = groupSplice(definition, grouping!.by, engine);
      text = text.replaceAll(GROUP_VALUE_MARKER, value).replaceAll(GROUP_JOIN_MARKER, join);
    }
    if (text === undefined) throw new Error(`Missing SQL for ${definition.name}: "${section}"`);
    const params: InsightStatement["params"] = {};
    for (const [, name] of text.matchAll(/\$(\w+)/g)) {
      const value = values[name!];
      if (value === undefined) throw new Error(`Unknown SQL parameter: "$${name}"`);
      params[name!] = value;
    }
    return { section, sql: text, params };
  });
}

/**
 * `text` with its {@link SESSIONS_MARKER}s narrowed to `sessions`, or
 * removed without them. A statement that cannot be narrowed fails rather
 * than answer for every session.
 */
function narrowed(text: string | undefined, sessions: readonly string[] | undefined) {
  if (text === undefined || sessions === undefined) return text;
  if (!text.includes(SESSIONS_MARKER)) {
    throw new Error(`Insight SQL without ${SESSIONS_MARKER}: ${text.slice(0, 80)}`);
  }
  return text.replaceAll(SESSIONS_MARKER, SESSIONS_PREDICATE);
}

/** One insight's statements for one request, and the body their rows make. */
export interface InsightQuery {
  statements: InsightStatement[];
  /** The body from the rows each statement read, in the order of {@link statements}. */
  body(results: readonly (readonly ReplicaRow[] | undefined)[]): InsightBody;
}

/** One insight asked for: which, of which organization, over which window, narrowed how, grouped how. */
export interface InsightRequest {
  name: AnyInsightName;
  orgId: string;
  window: InsightWindow;
  filters?: InsightFilters;
  grouping?: InsightGrouping;
}

/** The insight a request asks for, over the statements `sql` of `engine`. */
export function insightQuery(
  request: InsightRequest,
  sql: Readonly<Record<string, string>>,
  engine: InsightEngine = "duckdb",
  daysThrough: number | null = null,
): InsightQuery {
  const definition = INSIGHTS[request.name];
  const statements = insightStatements(definition, sql, engine, request, daysThrough);
  return {
    statements,
    body(results) {
      const rows: Partial<Record<InsightStatement["section"], readonly ReplicaRow[]>> = {};
      statements.forEach((statement, i) => rows[statement.section] = results[i] ?? []);
      const body = insightBody(definition, request.window, rows);
      if (request.grouping === undefined) return body;
      const groups = rows.groups ?? [];
      return {
        ...body,
        "group_by": request.grouping.by,
        groups: groups.slice(0, MAX_GROUPS).map((row) => ({
          value: row.group_value === null || row.group_value === undefined
            ? null
            : String(row.group_value),
          summary: shapeRow(definition.summary, row),
        })),
        "groups_truncated": groups.length > MAX_GROUPS,
      };
    },
  };
}

/**
 * The insight a request asks for on the replica: over the per-day rollups
 * reaching up to `daysThrough` (`Replica.daysThrough`) when the insight has
 * them and they serve the request exactly, else over raw rows (the
 * reference). `daysThrough` null: raw rows.
 */
export function replicaInsightQuery(
  request: InsightRequest,
  daysThrough: number | null,
): InsightQuery {
  const definition = INSIGHTS[request.name];
  return daysServe(definition, request) && daysThrough !== null
    ? insightQuery(request, definition.days!.sql, "duckdb", daysThrough)
    : insightQuery(request, definition.sql, "duckdb");
}

/**
 * Whether an insight's per-day rollups answer `request` exactly: they keep
 * no actor or team filter, and sessions only where `sessions` says.
 */
function daysServe(definition: InsightDefinition, request: InsightRequest): boolean {
  const { days } = definition;
  if (days === undefined) return false;
  const { filters = {}, grouping } = request;
  if (filters.actor !== undefined || filters.team !== undefined) return false;
  const bySession = filters.sessions !== undefined || grouping?.by.startsWith("dim.") === true;
  return days.sessions || !bySession;
}

/** Builds the envelope from the rows of each section (as {@link insightStatements} lists them). */
function insightBody(
  definition: InsightDefinition,
  window: InsightWindow,
  sectionRows: Partial<Record<InsightStatement["section"], readonly ReplicaRow[]>>,
): InsightBody {
  const rows = definition.rollup === undefined
    ? sectionRows
    : { ...sectionRows, ...splitRollup(definition.rollup, sectionRows.rollup ?? []) };
  const summaryRow = rows.summary?.[0] ?? {};
  return {
    window: windowObject(window),
    summary: shapeRow(definition.summary, summaryRow),
    series: definition.series === null
      ? null
      : (rows.series ?? []).map((row) => shapeRow(definition.series!, row)),
    breakdown: definition.breakdown === null ? null : nest(
      definition.nested,
      (rows.breakdown ?? []).map((row) => shapeRow(definition.breakdown!, row)),
      rows,
    ),
  };
}

/** The rows of a `rollup` statement by section, by their `level`. */
function splitRollup(
  levels: Readonly<Record<"summary" | "series" | "breakdown", number>>,
  rows: readonly ReplicaRow[],
): Record<"summary" | "series" | "breakdown", ReplicaRow[]> {
  const of = (level: number) => rows.filter((row) => Number(row.level) === level);
  return {
    summary: of(levels.summary),
    series: of(levels.series),
    breakdown: of(levels.breakdown),
  };
}

/** Puts each nested row into the breakdown row of its key (`[]` where none). */
function nest(
  nested: NestedRows | undefined,
  breakdown: Record<string, unknown>[],
  rows: Partial<Record<InsightStatement["section"], readonly ReplicaRow[]>>,
): Record<string, unknown>[] {
  if (nested === undefined) return breakdown;
  const keyOf = (row: Record<string, unknown>) =>
    JSON.stringify(nested.key.map((column) => row[column]));
  const byKey = new Map<string, Record<string, unknown>[]>();
  for (const row of rows[nested.section] ?? []) {
    const key = keyOf(row);
    const list = byKey.get(key) ?? [];
    list.push(shapeRow(nested.fields, row));
    byKey.set(key, list);
  }
  return breakdown.map((row) => ({ ...row, [nested.field]: byKey.get(keyOf(row)) ?? [] }));
}

function shapeRow(fields: Fields, row: ReplicaRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, kind] of Object.entries(fields)) out[name] = shapeValue(kind, row[name]);
  return out;
}

function shapeValue(kind: FieldKind, value: unknown): unknown {
  switch (kind) {
    case "int":
      return value === null || value === undefined ? 0 : Number(value);
    case "number":
      return value === null || value === undefined ? 0 : roundStat(Number(value));
    case "number?":
      return value === null || value === undefined ? null : roundStat(Number(value));
    case "usd":
      return value === null || value === undefined ? 0 : roundUsd(Number(value));
    case "usd?":
      return value === null || value === undefined ? null : roundUsd(Number(value));
    case "string":
      return value === null || value === undefined ? "" : String(value);
    case "string?":
      return value === null || value === undefined ? null : String(value);
    case "time":
      return formatTimestamp(Number(value));
    case "bool":
      return Boolean(value);
  }
}

/**
 * The spec's insight names, in the spec's order. Extensions are served
 * beside them but left out: the SQLite and PostgreSQL baselines and the
 * tests and benchmark that walk this list run the spec's six.
 */
export const INSIGHT_NAMES: readonly InsightName[] = Object.values(INSIGHTS)
  .filter((definition) => definition.spec)
  .map((definition) => definition.name as InsightName);

/** The DuckDB statements of each insight, by section (`summary`, `series`, `breakdown`). */
export const DUCKDB_INSIGHT_SQL: Readonly<Record<AnyInsightName, Record<string, string>>> = Object
  .fromEntries(
    Object.values(INSIGHTS).map((definition) => [definition.name, definition.sql]),
  ) as Record<AnyInsightName, Record<string, string>>;
