/**
 * A worker for the benchmark's SQLite insight baselines: runs
 * `runSqliteInsight` on its own read-only connection to `telemetry.db` and
 * answers with the elapsed milliseconds (and the body when asked), so the benchmark can stop a baseline
 * that runs past its time cap by terminating the worker.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { DatabaseSync } from "node:sqlite";
import { type InsightName, type InsightWindow, runSqliteInsight } from "../src/analytics/mod.ts";

/** A baseline run to make. */
export interface SqliteInsightRequest {
  path: string;
  name: InsightName;
  orgId: string;
  window: InsightWindow;
  /** Answer with the body too (to compare it with DuckDB's). */
  withBody?: boolean;
}

let db: DatabaseSync | null = null;

self.onmessage = (message: MessageEvent<SqliteInsightRequest>) => {
  const { path, name, orgId, window, withBody } = message.data;
  try {
    db ??= new DatabaseSync(path, { readOnly: true });
    const started = performance.now();
    const body = runSqliteInsight(db, name, orgId, window);
    self.postMessage({ ms: performance.now() - started, ...(withBody ? { body } : {}) });
  } catch (error) {
    self.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
};
