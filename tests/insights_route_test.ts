import assert from "node:assert/strict";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { engineTest } from "./_harness.ts";
import { insightWindow, routedToSqlite, SQLITE_ROUTES } from "../src/analytics/mod.ts";
import { sqliteInsightBatch } from "../src/analytics/sqlite_insights.ts";
import { EDGE_HORIZON_MS } from "../src/analytics/insight_runner.ts";
import type { InsightBody } from "../src/analytics/insights.ts";
import {
  assertInsightEqual,
  bashCall,
  generateTelemetry,
  type InsightsEnv,
  type InsightsOrg,
  readStoredRows,
  referenceInsight,
  startInsightsEnv,
  windowOf,
} from "./_insights_reference.ts";

async function load(env: InsightsEnv, org: InsightsOrg, seed: number) {
  const data = generateTelemetry({ seed, sessions: 80, days: 40, now: Date.now() });
  for (const batch of data.batches) await env.ingest(org, batch);
  await env.ingest(org, data.laterResults);
}

/** The body without its window. */
function sections(body: InsightBody) {
  const { window: _, ...rest } = body;
  return rest;
}

/** Every routed insight and window, as [name, window] pairs. */
const ROUTES = Object.entries(SQLITE_ROUTES).flatMap(([name, windows]) =>
  windows!.map((window) => [name as "risk", window] as const)
);

engineTest("a routed insight answers as the replica and the reference do", async () => {
  await using env = await startInsightsEnv();
  const org = await env.createOrg("Acme");
  await load(env, org, 41);
  await env.analytics.catchUp();
  assert.ok(ROUTES.length > 0);
  const raw = await readStoredRows(env);
  for (const [name, windowName] of ROUTES) {
    for (const granularity of ["daily", "weekly"] as const) {
      const window = insightWindow(windowName, granularity, Date.now());
      const routed = await env.analytics.cachedInsight(name, org.orgId, window);
      const replica = await env.analytics.insight(name, org.orgId, window);
      const label = `${name} ${windowName} ${granularity}`;
      assert.ok(Number(routed.summary.total_flags) > 0, `${label}: flags to count`);
      assert.deepEqual(routed, replica, label);
      assertInsightEqual(routed, referenceInsight(raw, name, org.orgId, windowOf(routed)), label);
    }
  }
});

engineTest("a routed insight's cached answer is dropped by the next export", async () => {
  await using env = await startInsightsEnv();
  const org = await env.createOrg("Acme");
  await load(env, org, 43);
  const path = "/v1/insights/risk?window=7d";
  const first = await env.get(path, org.apiKey);
  assert.equal(first.status, 200);
  const before = env.analytics.cacheStats;
  const again = await env.get(path, org.apiKey);
  assert.equal(env.analytics.cacheStats.hits, before.hits + 1, "the repeat is a hit");
  assert.deepEqual(sections(again.body), sections(first.body));

  // Nothing catches the replica up in between: an answer keyed by its version would stay.
  await env.ingest(org, [bashCall("fresh-rm", Date.now() - 5000, "rm -rf ./build /tmp/cache")]);
  const after = await env.get(path, org.apiKey);
  assert.equal(env.analytics.cacheStats.hits, before.hits + 1, "a miss");
  assert.equal(after.body.summary.total_flags, first.body.summary.total_flags + 1);
  const raw = await readStoredRows(env);
  assertInsightEqual(after.body, referenceInsight(raw, "risk", org.orgId, windowOf(after.body)));
});

/** The plans of every routed statement that reads risk_flags. */
function routedPlans(db: DatabaseSync, orgId: string): { sql: string; detail: string }[] {
  const plans = [];
  for (const [name, windowName] of ROUTES) {
    const window = insightWindow(windowName, "daily", Date.now());
    assert.ok(routedToSqlite(name, window));
    for (
      const { sql, params } of sqliteInsightBatch(
        name,
        orgId,
        window,
        "risk_flags",
        EDGE_HORIZON_MS,
      )
    ) {
      for (const row of db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params as SQLInputValue[])) {
        const detail = String(row.detail);
        if (/\brisk_flags\b/.test(detail)) plans.push({ sql, detail });
      }
    }
  }
  return plans;
}

engineTest(
  "routed insights read only the window's flags from risk_flags_by_time, with and without statistics",
  async () => {
    await using env = await startInsightsEnv();
    if (env.telemetryPath === null) return; // PostgreSQL: nothing is routed.
    const org = await env.createOrg("Acme");
    await load(env, org, 47);
    const analyzed = `${env.dir}/analyzed.db`;
    const live = new DatabaseSync(env.telemetryPath, { readOnly: true });
    live.exec(`VACUUM INTO '${analyzed}'`);
    const copy = new DatabaseSync(analyzed);
    copy.exec("ANALYZE");
    try {
      for (const db of [live, copy]) {
        const plans = routedPlans(db, org.orgId);
        assert.ok(plans.length >= 4 * ROUTES.length, "every section and the edges read risk_flags");
        for (const { sql, detail } of plans) {
          assert.match(
            detail,
            /^SEARCH risk_flags USING COVERING INDEX risk_flags_by_time \(org_id=\? AND ts>\?( AND ts<\?)?\)$/,
            sql,
          );
        }
      }
    } finally {
      live.close();
      copy.close();
    }
  },
);
