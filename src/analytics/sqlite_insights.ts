/**
 * The insights computed on SQLite (`telemetry.db`) with the replica's own SQL
 * (`sql/insights/<name>.sql`, which SQLite runs as it is) but for outliers
 * (`sql/insights/sqlite/outliers.sql`: SQLite has neither `quantile_cont` nor
 * `arg_max`): the baseline the benchmark measures the DuckDB replica against,
 * over the same rows and with the same envelope.
 *
 * @module
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { parseNamedSql } from "../store/named_sql.ts";
import activitySql from "../../sql/insights/activity.sql" with { type: "text" };
import costSql from "../../sql/insights/cost.sql" with { type: "text" };
import domainsSql from "../../sql/insights/domains.sql" with { type: "text" };
import outliersSql from "../../sql/insights/sqlite/outliers.sql" with { type: "text" };
import riskSql from "../../sql/insights/risk.sql" with { type: "text" };
import topToolsSql from "../../sql/insights/top_tools.sql" with { type: "text" };
import {
  type InsightBody,
  insightBody,
  type InsightName,
  INSIGHTS,
  type InsightStatement,
  insightStatements,
} from "./insights.ts";
import type { ReplicaRow } from "./replica.ts";
import type { InsightWindow } from "./window.ts";

/** The SQLite statements of each insight, by section. */
export const SQLITE_INSIGHT_SQL: Readonly<Record<InsightName, Record<string, string>>> = {
  "activity": parseNamedSql(activitySql),
  "top-tools": parseNamedSql(topToolsSql),
  "outliers": parseNamedSql(outliersSql),
  "cost": parseNamedSql(costSql),
  "risk": parseNamedSql(riskSql),
  "domains": parseNamedSql(domainsSql),
};

/**
 * Runs one insight directly on a `telemetry.db` connection (synchronously, on
 * the calling thread) and returns the same body the endpoint returns.
 */
export function runSqliteInsight(
  db: DatabaseSync,
  name: InsightName,
  orgId: string,
  window: InsightWindow,
): InsightBody {
  const definition = INSIGHTS[name];
  const rows: Partial<Record<InsightStatement["section"], ReplicaRow[]>> = {};
  for (const statement of insightStatements(definition, SQLITE_INSIGHT_SQL[name], orgId, window)) {
    rows[statement.section] = db.prepare(statement.sql).all(
      statement.params as Record<string, SQLInputValue>,
    ) as ReplicaRow[];
  }
  return insightBody(definition, window, rows);
}
