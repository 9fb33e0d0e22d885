/**
 * SQLite migration 6 (sql/sqlite/telemetry_0006_lean_filters.sql): tool-call
 * lists filtered by tool type, category or outcome walk the time index in
 * order (no sort), also once the planner has statistics of real-looking data,
 * and the facets of tool types and categories seek their own index.
 */
import assert from "node:assert/strict";
import { encodeJson, generateExports } from "../src/demo/mod.ts";
import { receiveExport } from "../src/ingest/receive.ts";
import { migrate, openDatabase } from "../src/store/sqlite/database.ts";
import { telemetryMigrations } from "../src/store/sqlite/migrations.ts";
import { sqliteQueries } from "../src/store/sqlite/reader.ts";
import { TelemetryWriter } from "../src/store/sqlite/telemetry_writer.ts";
import type { CallFilters, ReadStatement } from "../src/store/telemetry_queries.ts";

const ORG = "org_a";

async function withGeneratedStore(fn: (db: ReturnType<typeof openDatabase>) => void) {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/telemetry.db`);
  try {
    migrate(db, telemetryMigrations);
    const writer = new TelemetryWriter(db, { redactSecrets: true });
    const exports = generateExports({
      actors: 2,
      days: 20,
      seed: 3,
      now: new Date("2026-11-01T00:00:00Z"),
      batchRecords: 512,
    });
    for (const generated of exports) {
      const body = encodeJson(generated.body);
      const { events } = receiveExport(body, { encoding: "json", pathSignal: "logs" });
      writer.ingest({ orgId: ORG, actorId: `act_${generated.actor}` }, events);
    }
    fn(db);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
}

function plan(db: ReturnType<typeof openDatabase>, statement: ReadStatement): string {
  return (db.prepare(`EXPLAIN QUERY PLAN ${statement.sql}`).all(...statement.params) as {
    detail: string;
  }[]).map((row) => row.detail).join("\n");
}

function values(db: ReturnType<typeof openDatabase>, statement: ReadStatement): unknown[] {
  return db.prepare(statement.sql).all(...statement.params).map((row) => row.value);
}

const FILTERS: [string, CallFilters][] = [
  ["tool type", { toolType: "mcp" }],
  ["category", { category: "web_fetch" }],
  ["outcome", { outcome: "rejected" }],
];

Deno.test("tool calls by tool type, category or outcome walk the time index without a sort, with statistics too", async () => {
  await withGeneratedStore((db) => {
    for (const stats of [false, true]) {
      if (stats) db.exec("ANALYZE");
      for (const [name, filters] of FILTERS) {
        for (const cursor of [null, [1_790_000_000_000, "tc_x"] as [number, string]]) {
          const detail = plan(db, sqliteQueries.toolCallsPage(ORG, filters, cursor, 50));
          const label = `${name}, ${stats ? "analyzed" : "no statistics"}, cursor ${!!cursor}`;
          assert.match(detail, /SEARCH tool_calls USING INDEX tool_calls_by_time/, label);
          assert.doesNotMatch(detail, /TEMP B-TREE|SCAN tool_calls/, label);
        }
      }
    }
  });
});

Deno.test("the tool type and category facets seek their own index and list every stored value", async () => {
  await withGeneratedStore((db) => {
    db.exec("ANALYZE");
    for (
      const [facet, column, index] of [
        ["tool_types", "tool_type", "tool_calls_tool_types"],
        ["categories", "category", "tool_calls_categories"],
      ] as const
    ) {
      const statement = sqliteQueries.facet(ORG, facet);
      const detail = plan(db, statement);
      assert.match(detail, new RegExp(`USING COVERING INDEX ${index}`), detail);
      assert.doesNotMatch(detail, /SCAN tool_calls/, detail);
      const stored = db.prepare(
        `SELECT DISTINCT ${column} AS value FROM tool_calls WHERE org_id = ? ORDER BY 1`,
      ).all(ORG).map((row) => row.value);
      assert.ok(stored.length > 1, `generated data has several ${column} values`);
      assert.deepEqual(values(db, statement), stored);
    }
  });
});

Deno.test("tool_calls keeps only the indexes the lists, facets, sessions and replica read", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/telemetry.db`);
  try {
    migrate(db, telemetryMigrations);
    const indexes = db.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'tool_calls' ORDER BY 1",
    ).all().map((row) => row.name);
    assert.deepEqual(indexes, [
      "sqlite_autoindex_tool_calls_1",
      "tool_calls_by_actor",
      "tool_calls_by_seq",
      "tool_calls_by_session",
      "tool_calls_by_time",
      "tool_calls_by_tool_name",
      "tool_calls_categories",
      "tool_calls_tool_types",
    ]);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});
