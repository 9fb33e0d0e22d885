/**
 * Whether a catch-up counts as a build (insights answer a retryable 503 while
 * it runs, or on SQLite from the store) is decided by the rows it copies, not by how far the store's
 * sequence moved: on PostgreSQL seqs run ahead of the rows (issue #16: an
 * ordinary catch-up answered 918 × 503 in the 1M mixed-load bench). The real
 * builds that must still answer 503 are in insights_building_test.ts.
 */
import assert from "node:assert/strict";
import { engineTest, testEngine } from "./_harness.ts";
import { INSIGHT_NAMES } from "../src/analytics/mod.ts";
import type { ToolCallEvent } from "../src/model/telemetry.ts";
import { connectPostgres } from "../src/store/postgres/client.ts";
import {
  assertInsightEqual,
  type InsightsEnv,
  type InsightsOrg,
  readStoredRows,
  referenceInsight,
  startInsightsEnv,
  windowOf,
} from "./_insights_reference.ts";

const DAY = 86_400_000;

/** Tool calls through the store's writer, spread over the last 60 days. */
async function ingestToolCalls(env: InsightsEnv, org: InsightsOrg, from: number, count: number) {
  const now = Date.now();
  for (let start = from; start < from + count; start += 5000) {
    const batch: ToolCallEvent[] = [];
    for (let i = start; i < Math.min(from + count, start + 5000); i++) {
      batch.push({
        kind: "tool_call",
        sessionId: `s${Math.floor(i / 40)}`,
        identity: `call-${i}`,
        timeMs: now - 60 * DAY + (i % 50_000) * 100_000,
        agentSystem: "claude-code",
        agentVersion: "2.1.0",
        toolName: i % 3 === 0 ? "Bash" : "Read",
        toolType: "builtin",
        category: "code_exec",
        outcome: i % 17 === 0 ? "error" : "ok",
        durationMs: i % 50,
        resultSizeBytes: 10,
        source: "otlp_logs",
        toolCallId: `call-${i}`,
        arguments: JSON.stringify({ command: "ls" }),
      });
    }
    await env.ingest(org, batch);
  }
}

/**
 * Takes `count` seqs in a transaction that rolls back, as failed and retried
 * exports, sessions and rollups take seqs on PostgreSQL without replicated rows.
 */
async function burnSeqs(url: string, count: number): Promise<void> {
  const sql = connectPostgres(url, { max: 1 });
  try {
    await sql.begin(async (tx) => {
      await tx`SELECT count(nextval('telemetry_seq')) FROM generate_series(1, ${count}::int)`;
      throw new RollBack();
    }).catch((error) => {
      if (!(error instanceof RollBack)) throw error;
    });
  } finally {
    await sql.end();
  }
}

class RollBack extends Error {}

engineTest(
  "a catch-up of fewer than 100,000 rows is waited for, however far the sequence moved",
  async () => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Acme");
    await ingestToolCalls(env, org, 0, 1000);
    assert.equal((await env.get("/v1/insights/activity?window=90d", org.apiKey)).status, 200);
    // About a second of copying: longer than the 250 ms a request waits for a build.
    await ingestToolCalls(env, org, 1000, 50_000);
    const source = env.stores.replicaSource;
    if (testEngine() === "postgres" && source.engine === "postgres") {
      await burnSeqs(source.url, 150_000);
    }
    const answers = await Promise.all(
      INSIGHT_NAMES.map(async (name) => ({
        name,
        ...(await env.get(`/v1/insights/${name}?window=90d`, org.apiKey)),
      })),
    );
    const raw = await readStoredRows(env);
    assert.equal(raw.toolCalls.length, 51_000);
    for (const { name, status, body } of answers) {
      assert.equal(status, 200, `${name}: ${JSON.stringify(body)}`);
      assertInsightEqual(body, referenceInsight(raw, name, org.orgId, windowOf(body)), name);
    }
  },
);

engineTest(
  "a catch-up of more than 100,000 rows into a built replica: SQLite answers meanwhile, PostgreSQL a retryable 503",
  async () => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Acme");
    await ingestToolCalls(env, org, 0, 1000);
    assert.equal((await env.get("/v1/insights/activity?window=90d", org.apiKey)).status, 200);
    await ingestToolCalls(env, org, 1000, 105_000);
    const started = performance.now();
    const { status, body } = await env.get("/v1/insights/activity?window=90d", org.apiKey);
    if (testEngine() === "sqlite") {
      // The store answers while the replica copies the rows (src/analytics/insight_runner.ts).
      assert.equal(status, 200, JSON.stringify(body));
      const raw = await readStoredRows(env);
      assertInsightEqual(body, referenceInsight(raw, "activity", org.orgId, windowOf(body)), "");
    } else {
      assert.equal(status, 503, JSON.stringify(body));
      assert.equal(body.error.code, "insights_unavailable");
      assert.ok(performance.now() - started < 1000);
    }
    await env.analytics.catchUp();
    const after = await env.get("/v1/insights/activity?window=90d", org.apiKey);
    assert.equal(after.status, 200);
    const raw = await readStoredRows(env);
    assert.equal(raw.toolCalls.length, 106_000);
    assertInsightEqual(
      after.body,
      referenceInsight(raw, "activity", org.orgId, windowOf(after.body)),
      "activity",
    );
  },
);
