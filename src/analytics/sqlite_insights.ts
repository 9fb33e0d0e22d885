/**
 * The insights computed on SQLite (`telemetry.db`) with the replica's own SQL
 * (`sql/insights/<name>.sql`, which SQLite runs as it is) but for outliers
 * (`sql/insights/sqlite/outliers.sql`: SQLite has neither `quantile_cont` nor
 * `arg_max`): the baseline the benchmark measures the DuckDB replica against,
 * over the same rows and with the same envelope.
 *
 * Some insights are also served from SQLite when the store is SQLite
 * ({@link SQLITE_ROUTES}): they then run on the store's reader threads, read
 * what is committed (every acknowledged write) with no replica catch-up, and
 * are cached under the store's seq ({@link sqliteInsightBatch}).
 *
 * @module
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { namedSql, parseNamedSql } from "../store/named_sql.ts";
import type { ReadStatement } from "../store/telemetry_queries.ts";
import storePositionSql from "../../sql/sqlite/store_position.sql" with { type: "text" };
import {
  type AnyInsightName,
  INSIGHT_NAMES,
  type InsightBody,
  type InsightFilters,
  type InsightGrouping,
  type InsightName,
  insightQuery,
  INSIGHTS,
  type InsightStatement,
} from "./insights.ts";
import type { ReplicaRow } from "./replica.ts";
import type { InsightWindow, WindowName } from "./window.ts";
import { windowEdgesSql } from "./insight_cache.ts";

/** The SQLite statements of each of the spec's insights, by section (from the registry). */
export const SQLITE_INSIGHT_SQL: Readonly<Record<InsightName, Readonly<Record<string, string>>>> =
  Object.fromEntries(
    INSIGHT_NAMES.map((name) => [name, INSIGHTS[name].sqlite?.sql ?? INSIGHTS[name].sql]),
  ) as Record<InsightName, Readonly<Record<string, string>>>;

/**
 * Runs one insight directly on a `telemetry.db` connection (synchronously, on
 * the calling thread) and returns the same body the endpoint returns.
 */
export function runSqliteInsight(
  db: DatabaseSync,
  name: InsightName,
  orgId: string,
  window: InsightWindow,
  grouping?: InsightGrouping,
): InsightBody {
  const query = insightQuery({ name, orgId, window, grouping }, SQLITE_INSIGHT_SQL[name], "sqlite");
  return query.body(
    query.statements.map((statement) =>
      db.prepare(statement.sql).all(
        statement.params as Record<string, SQLInputValue>,
      ) as ReplicaRow[]
    ),
  );
}

/**
 * The insights and windows answered from SQLite when the store is SQLite,
 * because they measured faster there (the registry's `sqlite.windows`, with
 * the measurements beside it in `insights.ts`).
 */
export const SQLITE_ROUTES: Readonly<Partial<Record<AnyInsightName, readonly WindowName[]>>> =
  Object.fromEntries(
    Object.values(INSIGHTS).flatMap((definition) =>
      (definition.sqlite?.windows.length ?? 0) > 0
        ? [[definition.name, definition.sqlite!.windows]]
        : []
    ),
  );

/** Whether this request is answered from SQLite (when the store is SQLite). */
export function routedToSqlite(
  name: AnyInsightName,
  window: InsightWindow,
  filters: InsightFilters = {},
): boolean {
  return sqliteAnswers(name, filters) && (SQLITE_ROUTES[name]?.includes(window.window) ?? false);
}

/**
 * Whether SQLite can answer this request at all (when the store is SQLite):
 * every insight but productivity, without actor, team or dimension filters,
 * whose statements exist for the replica only. What it answers while the
 * replica is being built.
 */
export function sqliteAnswers(name: AnyInsightName, filters: InsightFilters = {}): boolean {
  if (name === "productivity") return false;
  if (filters.actor !== undefined || filters.team !== undefined) return false;
  // The dimension filters' sessions narrow the replica's statements only.
  return filters.sessions === undefined;
}

const STORE_POSITION = namedSql(parseNamedSql(storePositionSql), "store_position");

/** The statement that reads the store's position (seq). */
export const STORE_POSITION_STATEMENT: ReadStatement = { sql: STORE_POSITION, params: [] };

/** The seq a {@link STORE_POSITION_STATEMENT} read. */
export function storePosition(rows: readonly unknown[] | undefined): number {
  const row = rows?.[0] as { seq?: number | bigint } | undefined;
  return Number(row?.seq ?? 0);
}

/**
 * What the reader threads run for one routed insight, in one snapshot: the
 * store's position, the insight's statements, then the window's edges in
 * `table`, read up to `horizonMs` past each (for `insight_cache.ts`). Read
 * the results with {@link sqliteInsightAnswer}.
 */
export function sqliteInsightBatch(
  name: InsightName,
  orgId: string,
  window: InsightWindow,
  table: string,
  horizonMs: number,
  grouping?: InsightGrouping,
): ReadStatement[] {
  const { statements } = insightQuery(
    { name, orgId, window, grouping },
    SQLITE_INSIGHT_SQL[name],
    "sqlite",
  );
  const edges = positional(windowEdgesSql(table), {
    org: orgId,
    start: window.start,
    end: window.end,
    horizon: horizonMs,
  });
  return [
    STORE_POSITION_STATEMENT,
    ...statements.map(({ sql, params }) => positional(sql, params)),
    edges,
  ];
}

/** The body, seq and window edges of a {@link sqliteInsightBatch}'s results. */
export function sqliteInsightAnswer(
  name: InsightName,
  window: InsightWindow,
  results: readonly unknown[][],
  grouping?: InsightGrouping,
): { body: InsightBody; seq: number; edges: { lo: number | null; hi: number | null } } {
  const query = insightQuery(
    { name, orgId: "", window, grouping },
    SQLITE_INSIGHT_SQL[name],
    "sqlite",
  );
  const edge = results[query.statements.length + 1]?.[0] as
    | { lo?: number; hi?: number }
    | undefined;
  return {
    body: query.body(results.slice(1) as ReplicaRow[][]),
    seq: storePosition(results[0]),
    edges: { lo: edge?.lo ?? null, hi: edge?.hi ?? null },
  };
}

/**
 * A statement with `$name` parameters as the reader threads take it:
 * numbered `?N` parameters bound by position.
 */
function positional(sql: string, params: InsightStatement["params"]): ReadStatement {
  const names: string[] = [];
  const text = sql.replace(/\$(\w+)/g, (_, name: string) => {
    if (!(name in params)) throw new Error(`Unknown SQL parameter: "$${name}"`);
    // The dimension filters' sessions: never routed here (routedToSqlite).
    if (typeof params[name] === "object") throw new Error(`List parameter on SQLite: "$${name}"`);
    let index = names.indexOf(name);
    if (index < 0) index = names.push(name) - 1;
    return `?${index + 1}`;
  });
  return { sql: text, params: names.map((name) => params[name] as string | number) };
}
