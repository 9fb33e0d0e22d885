import assert from "node:assert/strict";
import { engineTest, startTestServer } from "./_harness.ts";
import { apiRequest, claudeEvent, claudeExport, toolDecision, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

async function post(
  url: string,
  key: string,
  body: BodyInit,
  headers: Record<string, string> = { "content-type": "application/json" },
) {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, ...headers },
    body,
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function gzip(text: string): Promise<Uint8Array> {
  return new Response(
    new Blob([text]).stream().pipeThrough(new CompressionStream("gzip")),
  ).bytes();
}

engineTest("ingest answers 200 with an empty JSON response and stores the calls", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const body = JSON.stringify(claudeExport([
    toolResult({ session: "s1", id: "a", tool: "Bash", timeMs: T0, input: { command: "ls" } }),
  ]));
  const answer = await post(`${server.ingestUrl}/v1/logs`, org.ingestKey, body);
  assert.equal(answer.status, 200);
  assert.match(answer.headers.get("content-type") ?? "", /^application\/json/);
  assert.deepEqual(JSON.parse(answer.text), {});
  const list = await server.getJson("/v1/tool-calls", org.apiKey);
  assert.equal(list.body.data.length, 1);
  assert.equal(list.body.data[0].actor_id, org.actorId, "actor is the sending key's actor");
});

engineTest("the same export sent twice is stored once", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const body = JSON.stringify(claudeExport([
    toolResult({ session: "s1", id: "a", tool: "Bash", timeMs: T0 }),
    toolResult({ session: "s1", id: "b", tool: "Read", timeMs: T0 + 1 }),
    toolDecision({ session: "s1", id: "c", tool: "Edit", timeMs: T0 + 2, decision: "reject" }),
    apiRequest({ session: "s1", timeMs: T0 + 3, model: "m", costUsd: 1.25, requestId: "r" }),
  ]));
  for (let i = 0; i < 2; i++) {
    assert.equal((await post(`${server.ingestUrl}/v1/logs`, org.ingestKey, body)).status, 200);
  }
  const gz = await gzip(body);
  const zipped = await post(`${server.ingestUrl}/v1/logs`, org.ingestKey, gz as BodyInit, {
    "content-type": "application/json",
    "content-encoding": "gzip",
  });
  assert.equal(zipped.status, 200);
  const list = await server.getJson("/v1/tool-calls", org.apiKey);
  assert.equal(list.body.data.length, 3);
  const sessions = await server.getJson("/v1/sessions", org.apiKey);
  assert.equal(sessions.body.data[0].tool_call_count, 3);
  assert.equal(sessions.body.data[0].cost_usd, 1.25, "a retried model call is not counted twice");
});

engineTest(
  "a reject followed by the call's result becomes one ok call under the same id",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const reject = claudeExport([
      toolDecision({ session: "s1", id: "x", tool: "Bash", timeMs: T0, decision: "reject" }),
    ]);
    const first = await server.ingest("/v1/logs", reject, org.ingestKey);
    assert.equal(first.status, 200);
    await first.body?.cancel();
    const before = await server.getJson("/v1/tool-calls", org.apiKey);
    assert.equal(before.body.data[0].outcome, "rejected");
    const result = claudeExport([
      toolResult({ session: "s1", id: "x", tool: "Bash", timeMs: T0 + 500, durationMs: 42 }),
    ]);
    const response = await server.ingest("/v1/logs", result, org.ingestKey);
    await response.body?.cancel();
    const after = await server.getJson("/v1/tool-calls", org.apiKey);
    assert.equal(after.body.data.length, 1);
    assert.equal(after.body.data[0].id, before.body.data[0].id);
    assert.equal(after.body.data[0].outcome, "ok");
    assert.equal(after.body.data[0].duration_ms, 42);
    assert.equal(after.body.data[0].timestamp, new Date(T0 + 500).toISOString());
    const session = await server.getJson("/v1/sessions/s1", org.apiKey);
    assert.equal(session.body.session.tool_call_count, 1);
    assert.equal(session.body.session.success_count, 1);
    assert.equal(session.body.session.first_seen, new Date(T0 + 500).toISOString());
  },
);

engineTest(
  "an accept decision followed by a result is one call carrying the decision",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const records = [
      toolDecision({ session: "s1", id: "y", tool: "Read", timeMs: T0, decision: "accept" }),
      claudeEvent("tool_result", T0 + 5, {
        "session.id": "s1",
        "tool_name": "Read",
        "tool_use_id": "y",
        "success": "true",
        "duration_ms": "3",
      }),
    ];
    const response = await server.ingest("/v1/logs", claudeExport(records), org.ingestKey);
    await response.body?.cancel();
    const list = await server.getJson("/v1/tool-calls", org.apiKey);
    assert.equal(list.body.data.length, 1);
    assert.equal(list.body.data[0].outcome, "ok");
    assert.equal(list.body.data[0].decision, "accept");
  },
);

engineTest("bad ingest requests are refused and store nothing", async (t) => {
  await using server = await startTestServer({ flags: { ingestMaxBytes: "4096" } });
  const org = await server.createOrg();
  const url = `${server.ingestUrl}/v1/logs`;
  await t.step("malformed JSON → 400", async () => {
    assert.equal((await post(url, org.ingestKey, "{not json")).status, 400);
  });
  await t.step("truncated protobuf → 400", async () => {
    const answer = await post(url, org.ingestKey, new Uint8Array([0x0a, 0x05, 0x01]), {
      "content-type": "application/x-protobuf",
    });
    assert.equal(answer.status, 400);
  });
  await t.step("an API key → 401", async () => {
    const body = JSON.stringify(
      claudeExport([toolResult({ session: "s", id: "z", tool: "Bash", timeMs: T0 })]),
    );
    assert.equal((await post(url, org.apiKey, body)).status, 401);
  });
  await t.step("no key → 401", async () => {
    const response = await fetch(url, { method: "POST", body: "{}" });
    assert.equal(response.status, 401);
    await response.body?.cancel();
  });
  await t.step("over the size cap → 413, also when gzip hides it", async () => {
    const big = JSON.stringify(claudeExport([
      toolResult({
        session: "s",
        id: "big",
        tool: "Bash",
        timeMs: T0,
        input: { command: "x".repeat(8000) },
      }),
    ]));
    assert.equal((await post(url, org.ingestKey, big)).status, 413);
    const zipped = await gzip(big);
    assert.ok(zipped.length < 4096);
    const answer = await post(url, org.ingestKey, zipped as BodyInit, {
      "content-type": "application/json",
      "content-encoding": "gzip",
    });
    assert.equal(answer.status, 413);
  });
  await t.step("an unknown content type → 415", async () => {
    const answer = await post(url, org.ingestKey, "{}", { "content-type": "text/plain" });
    assert.equal(answer.status, 415);
  });
  await t.step("GET on an ingest path → 405; unknown path → 404", async () => {
    const get = await fetch(url);
    assert.equal(get.status, 405);
    await get.body?.cancel();
    const nope = await fetch(`${server.ingestUrl}/v1/nope`, { method: "POST" });
    assert.equal(nope.status, 404);
    await nope.body?.cancel();
  });
  await t.step("nothing was stored", async () => {
    assert.deepEqual((await server.getJson("/v1/tool-calls", org.apiKey)).body, { data: [] });
  });
});

engineTest(
  "unusable records are skipped and reported in partialSuccess; ignored events are not",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const records = [
      toolResult({ session: "s1", id: "ok", tool: "Bash", timeMs: T0 }),
      claudeEvent("tool_result", T0, { "tool_name": "Bash", "tool_use_id": "no-session" }),
      claudeEvent("user_prompt", T0, { "session.id": "s1", "prompt_length": "12" }),
    ];
    const answer = await post(
      `${server.ingestUrl}/v1/logs`,
      org.ingestKey,
      JSON.stringify(claudeExport(records)),
    );
    assert.equal(answer.status, 200);
    const body = JSON.parse(answer.text);
    assert.equal(Number(body.partialSuccess.rejectedLogRecords), 1);
    assert.match(body.partialSuccess.errorMessage, /session/i);
    assert.equal((await server.getJson("/v1/tool-calls", org.apiKey)).body.data.length, 1);
  },
);

engineTest("a JSON body is routed by its top key whatever the path", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const body = JSON.stringify(
    claudeExport([toolResult({ session: "s1", id: "a", tool: "Bash", timeMs: T0 })]),
  );
  const answer = await post(`${server.ingestUrl}/v1/traces`, org.ingestKey, body);
  assert.equal(answer.status, 200);
  const detail = await server.getJson("/v1/tool-calls", org.apiKey);
  assert.equal(detail.body.data.length, 1);
  const metrics = await post(
    `${server.ingestUrl}/v1/metrics`,
    org.ingestKey,
    JSON.stringify({ resourceMetrics: [] }),
  );
  assert.equal(metrics.status, 200);
});

Deno.test("a store that stays busy answers 503 with Retry-After and stores nothing", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const { DatabaseSync } = await import("node:sqlite");
  const blocker = new DatabaseSync(`${server.dir}/telemetry.db`);
  try {
    blocker.exec("BEGIN EXCLUSIVE");
    const body = JSON.stringify(
      claudeExport([toolResult({ session: "s", id: "a", tool: "Bash", timeMs: T0 })]),
    );
    const answer = await post(`${server.ingestUrl}/v1/logs`, org.ingestKey, body);
    assert.equal(answer.status, 503);
    assert.equal(answer.headers.get("retry-after"), "1");
    blocker.exec("ROLLBACK");
  } finally {
    blocker.close();
  }
  assert.deepEqual((await server.getJson("/v1/tool-calls", org.apiKey)).body, { data: [] });
});
