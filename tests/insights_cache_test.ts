import assert from "node:assert/strict";
import { engineTest } from "./_harness.ts";
import { INSIGHT_NAMES, type InsightWindow } from "../src/analytics/mod.ts";
import { InsightCache } from "../src/analytics/insight_cache.ts";
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

const DAY = 86_400_000;

async function load(env: InsightsEnv, org: InsightsOrg, seed: number) {
  const data = generateTelemetry({ seed, sessions: 80, days: 100, now: Date.now() });
  for (const batch of data.batches) await env.ingest(org, batch);
  await env.ingest(org, data.laterResults);
}

/** The body without its window, which differs between any two requests. */
function sections(body: InsightBody) {
  const { window: _, ...rest } = body;
  return rest;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

engineTest(
  "GET /v1/insights/* serves a repeated request from the cache until new telemetry is copied",
  async () => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Acme");
    await load(env, org, 31);
    const path = "/v1/insights/activity?window=30d";
    const first = await env.get(path, org.apiKey);
    const before = env.analytics.cacheStats;
    const again = await env.get(path, org.apiKey);
    assert.equal(env.analytics.cacheStats.hits, before.hits + 1, "the repeat is a hit");
    assert.deepEqual(sections(again.body), sections(first.body));
    assert.ok(again.body.window.end > first.body.window.end, "its own window, ending now");

    // A catch-up that copies nothing keeps the answers.
    await env.analytics.catchUp();
    await env.get(path, org.apiKey);
    assert.equal(env.analytics.cacheStats.hits, before.hits + 2);

    // New telemetry invalidates them: the next answer counts the new call.
    await env.ingest(org, [bashCall("fresh-1", Date.now() - 5000)]);
    const after = await env.get(path, org.apiKey);
    assert.equal(env.analytics.cacheStats.hits, before.hits + 2, "a miss");
    assert.equal(after.body.summary.total_calls, first.body.summary.total_calls + 1);

    // Every insight, cached or not, equals the reference over the stored rows.
    const raw = await readStoredRows(env);
    for (const name of INSIGHT_NAMES) {
      for (let i = 0; i < 2; i++) {
        const { status, body } = await env.get(`/v1/insights/${name}?window=90d`, org.apiKey);
        assert.equal(status, 200);
        assertInsightEqual(body, referenceInsight(raw, name, org.orgId, windowOf(body)), name);
      }
    }
    assert.ok(env.analytics.cacheStats.hits >= before.hits + 2 + INSIGHT_NAMES.length);
  },
);

/**
 * A call enters the 7d window at its end and another leaves it at its start,
 * each 3–5 s past the edge; with the default horizon the cache finds both
 * rows, with a 1 s horizon it finds neither and must not take that for "no
 * row" (reading the horizon's end as the edge).
 */
async function slidingWindow(edgeHorizonMs?: number) {
  await using env = await startInsightsEnv({ edgeHorizonMs });
  const org = await env.createOrg("Acme");
  await load(env, org, 37);
  const now = Date.now();
  // One call dated just after now (a client clock ahead), one about to fall out of 7d.
  await env.ingest(org, [
    bashCall("ahead", now + 3000),
    bashCall("leaving", now - 7 * DAY + 5000),
  ]);
  const first = await env.get("/v1/insights/activity?window=7d", org.apiKey);
  assert.ok(Date.parse(first.body.window.end) <= now + 3000, "asked before the call is due");
  const counted = first.body.summary.total_calls;
  await sleep(Math.max(0, now + 3100 - Date.now()));
  const entered = await env.get("/v1/insights/activity?window=7d", org.apiKey);
  assert.equal(entered.body.summary.total_calls, counted + 1, "the call now inside counts");
  await sleep(Math.max(0, now + 5100 - Date.now()));
  const left = await env.get("/v1/insights/activity?window=7d", org.apiKey);
  assert.equal(left.body.summary.total_calls, counted, "the call now outside does not");
  const raw = await readStoredRows(env);
  assertInsightEqual(
    left.body,
    referenceInsight(raw, "activity", org.orgId, windowOf(left.body)),
    "activity",
  );
}

engineTest(
  "GET /v1/insights/* recomputes when a call enters or leaves the sliding window",
  () => slidingWindow(),
);

engineTest(
  "GET /v1/insights/* recomputes when a call beyond the edges' horizon enters or leaves",
  () => slidingWindow(1000),
);

Deno.test("the insight cache holds an answer only while no row left or entered its window", () => {
  const cache = new InsightCache();
  const window = (start: number): InsightWindow => ({
    window: "7d",
    granularity: "daily",
    start,
    end: start + 7 * DAY,
  });
  const body = (calls: number): InsightBody => ({
    window: { window: "7d", granularity: "daily", start: "", end: "" },
    summary: { total_calls: calls },
    series: [],
    breakdown: null,
  });
  const key = InsightCache.key("activity", "org", window(0));
  const first = window(1_000);
  // The earliest row at or after the start is at 1,100; at or after the end, end + 50.
  cache.set(key, 7, first, { lo: 1_100, hi: first.end + 50 }, body(3));
  assert.deepEqual(cache.get(key, 7, window(1_050))?.summary, { total_calls: 3 });
  assert.equal(cache.get(key, 7, window(1_050))?.window.start, "1970-01-01T00:00:01.050Z");
  assert.equal(cache.get(key, 8, window(1_050)), null, "another replica position");
  cache.set(key, 7, first, { lo: 1_100, hi: first.end + 50 }, body(3));
  assert.equal(cache.get(key, 7, window(1_051)), null, "a row entered at the end");
  cache.set(key, 7, first, { lo: 1_030, hi: null }, body(3));
  assert.notEqual(cache.get(key, 7, window(1_030)), null);
  assert.equal(cache.get(key, 7, window(1_031)), null, "a row left at the start");
  assert.equal(cache.get(key, 7, window(999)), null, "an earlier window");
});

Deno.test("the insight cache stays within its byte budget, dropping the least recently used", () => {
  const cache = new InsightCache(40_000);
  const window: InsightWindow = { window: "90d", granularity: "daily", start: 0, end: 1 };
  const big = (i: number): InsightBody => ({
    window: { window: "90d", granularity: "daily", start: "", end: "" },
    summary: { i },
    series: Array.from({ length: 80 }, (_, j) => ({ bucket: j, calls: i })),
    breakdown: null,
  });
  for (let i = 0; i < 50; i++) {
    cache.set(`k${i}`, 1, window, { lo: null, hi: null }, big(i));
    assert.ok(cache.bytes <= 40_000, `${cache.bytes} bytes after ${i + 1} answers`);
  }
  assert.equal(cache.get("k0", 1, window), null, "the oldest went first");
  assert.deepEqual(cache.get("k49", 1, window)?.summary, { i: 49 });
});
