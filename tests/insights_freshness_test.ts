import assert from "node:assert/strict";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { InsightCache } from "../src/analytics/insight_cache.ts";
import { IngestActivity } from "../src/server/ingest_activity.ts";
import type { InsightBody } from "../src/analytics/insights.ts";
import type { InsightWindow } from "../src/analytics/window.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One Bash call; its command (`rm -rf`) raises a risk flag. */
function exportOf(id: string) {
  return claudeExport([
    toolResult({
      session: "s-fresh",
      id,
      tool: "Bash",
      timeMs: Date.now() - 60_000,
      input: { command: "rm -rf ./build" },
    }),
  ]);
}

async function send(server: TestServer, org: TestOrg, id: string): Promise<void> {
  const response = await server.ingest("/v1/logs", exportOf(id), org.ingestKey);
  assert.equal(response.status, 200, await response.text());
}

/**
 * Calls in the activity insight over 7 days, each checked against the flags
 * of the risk insight over 7 days (every call raises one), which on SQLite is
 * answered by the store's reader threads, not the replica: both keep the
 * same freshness bound.
 */
async function calls(server: TestServer, org: TestOrg): Promise<number> {
  const activity = await server.getJson("/v1/insights/activity?window=7d", org.apiKey);
  const risk = await server.getJson("/v1/insights/risk?window=7d", org.apiKey);
  assert.equal(activity.status, 200);
  assert.equal(risk.status, 200);
  assert.equal(
    risk.body.summary.total_flags,
    activity.body.summary.total_calls,
    "risk vs activity",
  );
  return activity.body.summary.total_calls;
}

async function inFlight(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.ingestUrl}/metrics`)).text();
  return Number(/^agent_telemetry_ingest_in_flight (\d+)/m.exec(text)?.[1]);
}

/**
 * An export whose body is still arriving: sent up to its last byte, which
 * {@link HeldExport.finish} sends. Resolves once the node counts it in flight.
 */
async function holdExport(server: TestServer, org: TestOrg, id: string) {
  const bytes = new TextEncoder().encode(JSON.stringify(exportOf(id)));
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => controller = c });
  controller.enqueue(bytes.subarray(0, bytes.length - 1));
  const answered = fetch(`${server.ingestUrl}/v1/logs`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${org.ingestKey}` },
    body,
  });
  const deadline = Date.now() + 10_000;
  while (await inFlight(server) === 0) {
    assert.ok(Date.now() < deadline, "the node never counted the held export in flight");
    await sleep(10);
  }
  return {
    async finish(): Promise<void> {
      controller.enqueue(bytes.subarray(bytes.length - 1));
      controller.close();
      const response = await answered;
      assert.equal(response.status, 200, await response.text());
    },
  };
}

engineTest(
  "GET /v1/insights/* sees every acknowledged export unless one is being received, then answers from a state within the freshness bound",
  async () => {
    await using server = await startTestServer({ overrides: { insightFreshnessMs: 60_000 } });
    const org = await server.createOrg();
    await send(server, org, "call-1");
    assert.equal(await calls(server, org), 1);
    await send(server, org, "call-2");
    assert.equal(await calls(server, org), 2, "nothing in flight: the write just acknowledged");

    const held = await holdExport(server, org, "call-4");
    await send(server, org, "call-3");
    assert.equal(
      await calls(server, org),
      2,
      "an export in flight: the answer of the state caught up a moment ago, not waiting for call-3",
    );
    await held.finish();
    assert.equal(await inFlight(server), 0);
    assert.equal(await calls(server, org), 4, "nothing in flight again: every acknowledged call");
  },
);

engineTest(
  "GET /v1/insights/* waits for a catch-up when the replica state is older than the freshness bound, even under ingest",
  async () => {
    await using server = await startTestServer({ overrides: { insightFreshnessMs: 300 } });
    const org = await server.createOrg();
    await send(server, org, "call-1");
    assert.equal(await calls(server, org), 1);
    const held = await holdExport(server, org, "call-3");
    await send(server, org, "call-2");
    await sleep(400);
    assert.equal(await calls(server, org), 2, "the state of the last catch-up is past the bound");
    await held.finish();
  },
);

async function replicaLag(server: TestServer): Promise<number> {
  const text = await (await fetch(`${server.ingestUrl}/metrics`)).text();
  return Number(/^agent_telemetry_replica_lag_seq (\d+)/m.exec(text)?.[1]);
}

engineTest(
  "the replica catches up in the background after writes, without an insight asking",
  async () => {
    await using following = await startTestServer({ overrides: { replicaFollowMs: 100 } });
    await using idle = await startTestServer({ overrides: { replicaFollowMs: null } });
    for (const server of [following, idle]) {
      const org = await server.createOrg();
      await send(server, org, "call-1");
      await send(server, org, "call-2");
    }
    const deadline = Date.now() + 10_000;
    while (await replicaLag(following) > 0) {
      assert.ok(Date.now() < deadline, "the replica never caught up with the writes");
      await sleep(25);
    }
    await sleep(300);
    assert.ok(await replicaLag(idle) > 0, "without following, the writes wait for an insight");
  },
);

Deno.test("the insight cache serves a recent enough state of an earlier position, with its own window once rows moved", () => {
  const DAY = 86_400_000;
  const cache = new InsightCache();
  const window = (end: number): InsightWindow => ({
    window: "7d",
    granularity: "daily",
    start: end - 7 * DAY,
    end,
  });
  const body: InsightBody = {
    window: { window: "7d", granularity: "daily", start: "", end: "" },
    summary: { total_calls: 3 },
    series: [],
    breakdown: null,
  };
  const key = InsightCache.key("activity", "org", window(0));
  const computed = window(10_000_000);
  // Computed at position 4 from a catch-up started at 9,990,000; a row at end + 100.
  cache.set(
    key,
    4,
    computed,
    { lo: computed.start + 500, hi: computed.end + 100 },
    body,
    9_990_000,
  );
  const later = window(10_000_050);
  assert.equal(cache.get(key, 5, later), null, "position 5, no floor: recompute");
  assert.equal(cache.get(key, 5, later, 9_990_001), null, "a state older than the floor");
  assert.equal(
    cache.get(key, 5, later, 9_990_000)?.window.end,
    new Date(later.end).toISOString(),
    "a state at the floor: the request's own window, no row moved",
  );
  const moved = window(10_000_200);
  assert.equal(
    cache.get(key, 5, moved, 9_990_000)?.window.end,
    new Date(computed.end).toISOString(),
    "a row entered: the window it was computed for, which ended after the floor",
  );
  assert.equal(cache.get(key, 5, moved, 10_000_001), null, "its window ended before the floor");
});

Deno.test("ingest activity marks exports that overlap, never one sender's exports sent one at a time", async () => {
  const activity = new IngestActivity();
  const gates: (() => void)[] = [];
  const handler = activity.countRequests(() =>
    new Promise<Response>((resolve) => gates.push(() => resolve(new Response("{}"))))
  );
  const post = () => handler(new Request("http://127.0.0.1/v1/logs", { method: "POST" }));
  const first = post();
  gates.shift()!();
  await first;
  const second = post();
  assert.equal(activity.inFlight, 1);
  gates.shift()!();
  await second;
  assert.equal(activity.lastOverlap, -Infinity, "one at a time: no overlap");
  const a = post();
  const b = post();
  assert.equal(activity.inFlight, 2);
  assert.ok(Date.now() - activity.lastOverlap < 1000, "two at once: an overlap now");
  for (const open of gates.splice(0)) open();
  await Promise.all([a, b]);
  assert.equal(activity.inFlight, 0);
});
