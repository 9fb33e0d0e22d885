/**
 * Test helpers for stored metric points: every row of a test server's
 * `metric_points` with what it adds to its interval, computed by
 * `sql/metrics/interval_deltas.sql` on the store itself (SQLite or
 * PostgreSQL), and totals of those deltas per measure and dimension.
 */
import { DatabaseSync } from "node:sqlite";
import deltasSql from "../sql/metrics/interval_deltas.sql" with { type: "text" };
import { namedSql, parseNamedSql } from "../src/store/named_sql.ts";
import { connectPostgres } from "../src/store/postgres/client.ts";
import { dataPaths } from "../src/store/sqlite/data_dir.ts";
import type { TestServer } from "./_harness.ts";

const INTERVAL_DELTAS = namedSql(parseNamedSql(deltasSql), "interval_deltas");

/** A stored point as a test reads it back (times as decimal text, exact). */
export interface StoredPoint {
  id: string;
  "org_id": string;
  "actor_id": string;
  agent: string;
  "agent_system": string;
  "agent_version": string;
  "session_id": string;
  instrument: string;
  measure: string;
  type: string;
  model: string;
  tool: string;
  decision: string;
  language: string;
  temporality: string;
  "start_time_ns": string | null;
  "time_ns": string;
  ts: number;
  value: number;
  delta: number;
}

/** Every stored point with what it adds to its interval, read from the server's own store. */
export async function storedPoints(server: TestServer): Promise<StoredPoint[]> {
  const select = `SELECT p.id, p.org_id, p.actor_id, p.agent, p.agent_system, p.agent_version,
      p.session_id, p.instrument, p.measure, p.type, p.model, p.tool, p.decision, p.language,
      p.temporality, CAST(p.start_time_ns AS TEXT) AS start_time_ns,
      CAST(p.time_ns AS TEXT) AS time_ns, p.ts, p.value, d.delta
    FROM metric_points AS p JOIN (${INTERVAL_DELTAS.replace(/;\s*$/, "")}) AS d ON d.id = p.id
    ORDER BY p.id`;
  if (server.database === null) {
    const db = new DatabaseSync(dataPaths(server.dir).telemetry, { readOnly: true });
    try {
      return db.prepare(select).all() as unknown as StoredPoint[];
    } finally {
      db.close();
    }
  }
  const sql = connectPostgres(server.database, { max: 1 });
  try {
    const rows = await sql.unsafe(select);
    return rows.map((row) => ({
      ...row,
      ts: Number(row.ts),
      value: Number(row.value),
      delta: Number(row.delta),
    })) as unknown as StoredPoint[];
  } finally {
    await sql.end();
  }
}

/** `measure` and `measure/dimension=value` totals of the stored deltas, rounded to 1e-9. */
export function storedTotals(points: readonly StoredPoint[]): Record<string, number> {
  const totals: Record<string, number> = {};
  const add = (key: string, value: number) => totals[key] = (totals[key] ?? 0) + value;
  for (const point of points) {
    add(point.measure, point.delta);
    for (const dimension of ["type", "model", "tool", "decision", "language"] as const) {
      if (point[dimension] !== "") {
        add(`${point.measure}/${dimension}=${point[dimension]}`, point.delta);
      }
    }
  }
  for (const key in totals) totals[key] = Math.round(totals[key]! * 1e9) / 1e9;
  return totals;
}

/** The value of one series of a Prometheus counter in `/metrics` text, 0 when absent. */
export function counterValue(scrape: string, name: string, labels: string): number {
  const line = scrape.split("\n").find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}
