/**
 * The insights computed on PostgreSQL: the replica's rollups of
 * `sql/insights/`, which PostgreSQL runs as they are, but for
 * outliers (`sql/insights/postgres/outliers.sql`: PostgreSQL has
 * `percentile_cont`). The benchmark's baseline with
 * `--database`, as `runSqliteInsight` is without it — same statements
 * builder, same envelope, so the body can be compared with DuckDB's.
 *
 * @module
 */
import {
  type InsightBody,
  type InsightName,
  insightQuery,
  type InsightStatement,
} from "../src/analytics/insights.ts";
import type { InsightWindow } from "../src/analytics/mod.ts";
import type { ReplicaRow } from "../src/analytics/replica.ts";
import { parseNamedSql } from "../src/store/named_sql.ts";
import type { PgParam, Sql, TransactionSql } from "../src/store/postgres/client.ts";
import activitySql from "../sql/insights/activity.sql" with { type: "text" };
import costSql from "../sql/insights/cost.sql" with { type: "text" };
import domainsSql from "../sql/insights/domains.sql" with { type: "text" };
import outliersSql from "../sql/insights/postgres/outliers.sql" with { type: "text" };
import riskSql from "../sql/insights/risk.sql" with { type: "text" };
import topToolsSql from "../sql/insights/top_tools.sql" with { type: "text" };

/** The PostgreSQL statements of each insight, by section. */
const POSTGRES_INSIGHT_SQL: Readonly<Record<InsightName, Record<string, string>>> = {
  "activity": parseNamedSql(activitySql),
  "top-tools": parseNamedSql(topToolsSql),
  "outliers": parseNamedSql(outliersSql),
  "cost": parseNamedSql(costSql),
  "risk": parseNamedSql(riskSql),
  "domains": parseNamedSql(domainsSql),
};

/** PostgreSQL's code for a statement cancelled by `statement_timeout`. */
const QUERY_CANCELED = "57014";

/** A statement that ran past its time limit. */
export class BaselineTimeoutError extends Error {}

/**
 * Runs one insight on PostgreSQL — its statements pipelined in one
 * read-only snapshot, as the server's reader runs a batch — and returns the
 * body the endpoint returns. Each statement may run `timeoutMs`; past it,
 * {@link BaselineTimeoutError}.
 */
export async function runPostgresInsight(
  sql: Sql,
  name: InsightName,
  orgId: string,
  window: InsightWindow,
  timeoutMs: number,
): Promise<InsightBody> {
  const query = insightQuery({ name, orgId, window }, POSTGRES_INSIGHT_SQL[name]);
  const statements = query.statements;
  let results: ReplicaRow[][];
  try {
    results = await sql.begin(
      "ISOLATION LEVEL REPEATABLE READ READ ONLY",
      async (tx: TransactionSql) => {
        const [, ...rows] = await Promise.all([
          tx.unsafe(`SET LOCAL statement_timeout = ${Math.max(1, Math.trunc(timeoutMs))}`),
          ...statements.map((statement) => {
            const { text, params } = positional(statement);
            return tx.unsafe(text, params);
          }),
        ]);
        return rows.map((r) => Array.from(r) as ReplicaRow[]);
      },
    ) as ReplicaRow[][];
  } catch (error) {
    if ((error as { code?: string }).code === QUERY_CANCELED) {
      throw new BaselineTimeoutError(`${name}: past ${timeoutMs} ms`);
    }
    throw error;
  }
  return query.body(results);
}

/** `$name` parameters as `$1, $2, …` (one number per name) and their values in that order. */
function positional(statement: InsightStatement): { text: string; params: PgParam[] } {
  const numbers = new Map<string, number>();
  const params: PgParam[] = [];
  const text = statement.sql.replace(/\$([A-Za-z_]\w*)/g, (_, name: string) => {
    let n = numbers.get(name);
    if (n === undefined) {
      // The baselines run unfiltered: no list parameter (the dimension filters' sessions).
      params.push(statement.params[name] as PgParam);
      n = params.length;
      numbers.set(name, n);
    }
    return `$${n}`;
  });
  return { text, params };
}
