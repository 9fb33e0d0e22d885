import assert from "node:assert/strict";
import { engineTest, testEngine } from "./_harness.ts";
import { INSIGHT_NAMES } from "../src/analytics/mod.ts";
import type { ToolCallEvent } from "../src/model/telemetry.ts";
import { dataPaths } from "../src/store/sqlite/data_dir.ts";
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

/**
 * Stores `count` tool calls over the last 80 days through the store's writer:
 * enough that building the replica from them takes seconds on this machine.
 */
async function loadToolCalls(env: InsightsEnv, org: InsightsOrg, count: number) {
  const now = Date.now();
  const batchSize = 5000;
  for (let from = 0; from < count; from += batchSize) {
    const batch: ToolCallEvent[] = [];
    for (let i = from; i < Math.min(count, from + batchSize); i++) {
      batch.push({
        kind: "tool_call",
        sessionId: `s${Math.floor(i / 40)}`,
        identity: `call-${i}`,
        timeMs: now - 80 * DAY + Math.floor((i / count) * 80 * DAY),
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

async function getWithHeaders(env: InsightsEnv, path: string, key: string) {
  const response = await fetch(env.url + path, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

engineTest(
  "GET /v1/insights/* while the replica is built: SQLite answers what it can, else a retryable 503 within 1 s",
  async () => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Acme");
    await loadToolCalls(env, org, 150_000);
    await env.analytics.ready;
    // A deleted replica is built again from the whole store, in the background.
    let built = false;
    const analytics = await env.reopenAnalytics({
      beforeOpen: () => Deno.remove(dataPaths(env.dir).analytics),
    });
    const ready = analytics.ready.then(() => {
      built = true;
    });
    ready.catch(() => {});
    // Not ready for insights while they answer 503 (`/readyz` reads this): once the
    // catch-up has counted its backlog (on PostgreSQL a moment after the start).
    let notReady: unknown = null;
    for (let i = 0; i < 100 && notReady === null && !built; i++) {
      notReady = await analytics.checkReady().then(() => null, (error) => error);
      if (notReady === null) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.match(String(notReady), /being built/, "ready while the replica was built");
    // On SQLite the store answers every insight it has statements for, one at a time
    // (the others a 503: the reader threads are the lists' too); productivity, and an
    // insight narrowed by dimension, read the replica only.
    const sqlite = testEngine() === "sqlite";
    const paths = [
      ...INSIGHT_NAMES.map((name) => `/v1/insights/${name}?window=90d`),
      "/v1/insights/activity?window=90d&dim.team.id=platform",
    ];
    const replicaOnly = paths.filter((path) => !sqlite || /productivity|dim\./.test(path));
    // The first asked of the store at once, while the build surely runs.
    const first = sqlite && !built ? await env.get(paths[0]!, org.apiKey) : null;
    const answers = await Promise.all(replicaOnly.map(async (path) => {
      const started = performance.now();
      const answer = await getWithHeaders(env, path, org.apiKey);
      return { name: path, ...answer, elapsed: performance.now() - started, during: !built };
    }));
    for (const { name, status, headers, body, elapsed, during } of answers) {
      assert.ok(during, `${name} answered while the build still ran`);
      assert.equal(status, 503, `${name}: ${JSON.stringify(body)}`);
      assert.ok(elapsed < 1000, `${name} answered in ${Math.round(elapsed)} ms`);
      assert.equal(headers.get("retry-after"), "2");
      assert.deepEqual(body, {
        error: {
          code: "insights_unavailable",
          message: "insights are being prepared: the analytics replica is being built; retry later",
        },
      });
    }
    const raw = await readStoredRows(env);
    assert.ok(!sqlite || first !== null, "the build ended before an insight was asked");
    for (const path of paths.filter((path) => !replicaOnly.includes(path))) {
      const { status, body } = path === paths[0] && first ? first : await env.get(path, org.apiKey);
      assert.equal(status, 200, `${path}: ${JSON.stringify(body)}`);
      const insight = /insights\/([a-z-]+)/.exec(path)![1]!;
      assertInsightEqual(body, referenceInsight(raw, insight, org.orgId, windowOf(body)), path);
    }
    // Lists do not wait for the build.
    assert.equal((await env.get("/v1/sessions?limit=1", org.apiKey)).status, 200);
    await ready;
    await analytics.checkReady();
    for (const name of INSIGHT_NAMES) {
      const { status, body } = await env.get(`/v1/insights/${name}?window=90d`, org.apiKey);
      assert.equal(status, 200, name);
      assertInsightEqual(body, referenceInsight(raw, name, org.orgId, windowOf(body)), name);
    }
  },
);
