import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { INSIGHT_NAMES, runSqliteInsight } from "../src/analytics/mod.ts";
import {
  assertInsightEqual,
  generateTelemetry,
  type InsightsEnv,
  type InsightsOrg,
  readStoredRows,
  referenceGroupedInsight,
  referenceInsight,
  startInsightsEnv,
  windowOf,
} from "./_insights_reference.ts";
import { engineTest } from "./_harness.ts";

const COMBINATIONS = [
  ["7d", "daily"],
  ["30d", "daily"],
  ["30d", "weekly"],
  ["90d", "daily"],
  ["90d", "weekly"],
] as const;

/**
 * Every insight, window and granularity for each org, against the reference
 * and (on the embedded store) the SQLite rollups; and grouped by agent
 * (docs/api.md §4.23), each agent's summary against the reference's.
 */
async function assertAllMatch(env: InsightsEnv, orgs: InsightsOrg[]): Promise<void> {
  const raw = await readStoredRows(env);
  const sqlite = env.telemetryPath === null
    ? null
    : new DatabaseSync(env.telemetryPath, { readOnly: true });
  try {
    for (const org of orgs) {
      for (const name of INSIGHT_NAMES) {
        for (const [window, granularity] of COMBINATIONS) {
          const path = `/v1/insights/${name}?window=${window}&granularity=${granularity}`;
          const { status, body } = await env.get(path, org.apiKey);
          assert.equal(status, 200, `${path}: ${JSON.stringify(body)}`);
          const resolved = windowOf(body);
          assert.equal(resolved.window, window);
          assert.equal(resolved.granularity, granularity);
          const expected = referenceInsight(raw, name, org.orgId, resolved);
          assertInsightEqual(body, expected, `${org.orgId} ${path}`);
          const grouped = await env.get(`${path}&group_by=agent`, org.apiKey);
          const byAgent = { by: "agent" };
          assertInsightEqual(
            grouped.body,
            referenceGroupedInsight(raw, name, org.orgId, windowOf(grouped.body), byAgent),
            `${org.orgId} ${path}&group_by=agent`,
          );
          if (sqlite === null) continue;
          const sqliteWindow = { window, granularity, start: resolved.start, end: resolved.end };
          const viaSqlite = runSqliteInsight(sqlite, name, org.orgId, sqliteWindow);
          assertInsightEqual(viaSqlite, expected, `SQLite ${org.orgId} ${path}`);
          const groupedViaSqlite = runSqliteInsight(sqlite, name, org.orgId, sqliteWindow, {
            by: "agent",
          });
          assertInsightEqual(
            groupedViaSqlite,
            referenceGroupedInsight(raw, name, org.orgId, resolved, byAgent),
            `SQLite ${org.orgId} ${path} by agent`,
          );
        }
      }
    }
  } finally {
    sqlite?.close();
  }
}

engineTest(
  "insights match a plain TypeScript reference for every window, granularity and org",
  async (t) => {
    await using env = await startInsightsEnv();
    const acme = await env.createOrg("Acme");
    const globex = await env.createOrg("Globex");
    const now = Date.now();
    // Acme: enough sessions and variety to fill every 50-row breakdown and to have outliers.
    const big = generateTelemetry({ seed: 1, sessions: 1400, days: 100, now, variety: 70 });
    const small = generateTelemetry({ seed: 2, sessions: 150, days: 100, now, prefix: "g" });
    const half = Math.ceil(big.batches.length / 2);

    await t.step("after the first half of the data", async () => {
      for (const batch of big.batches.slice(0, half)) await env.ingest(acme, batch);
      for (const batch of small.batches) await env.ingest(globex, batch);
      await assertAllMatch(env, [acme, globex]);
    });

    await t.step("after the rest, results that replace stored rejects included", async () => {
      for (const batch of big.batches.slice(half)) await env.ingest(acme, batch);
      await env.ingest(acme, big.laterResults);
      await env.ingest(globex, small.laterResults);
      await assertAllMatch(env, [acme, globex]);
    });

    await t.step("the data set exercises every part of every insight", async () => {
      const raw = await readStoredRows(env);
      const acmeCalls = raw.toolCalls.filter((row) => row.org_id === acme.orgId);
      assert.ok(acmeCalls.some((row) => row.outcome === "rejected"));
      assert.ok(acmeCalls.some((row) => row.outcome === "error"));
      assert.ok(raw.riskFlags.some((row) => row.org_id === acme.orgId), "risk flags exist");
      assert.ok(raw.domainHits.some((row) => row.org_id === acme.orgId), "domain hits exist");
      assert.ok(big.laterResults.length > 0, "some rejects are replaced by results");
      const hosts = new Set(raw.domainHits.map((row) => `${row.domain} ${row.scheme}`));
      assert.ok(hosts.size > 50, `more than 50 domain rows (${hosts.size})`);
    });
  },
);
