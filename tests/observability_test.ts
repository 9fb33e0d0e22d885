import assert from "node:assert/strict";
import { engineTest, startTestServer, testEngine } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";
import { RequestSummary, SUMMARY_EVERY_MS } from "../src/http/observe.ts";

engineTest("/readyz answers ready on both listeners while the stores work", async () => {
  await using server = await startTestServer();
  for (const base of [server.queryUrl, server.ingestUrl]) {
    const response = await fetch(`${base}/readyz`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { status: "ready" });
  }
});

Deno.test("/readyz answers 503 when the telemetry store cannot be written", async () => {
  await using server = await startTestServer();
  const { DatabaseSync } = await import("node:sqlite");
  const blocker = new DatabaseSync(`${server.dir}/telemetry.db`, { timeout: 0 });
  try {
    blocker.exec("BEGIN EXCLUSIVE");
    const response = await fetch(`${server.queryUrl}/readyz`);
    assert.equal(response.status, 503);
    const body = await response.json();
    assert.equal(body.status, "unavailable");
    assert.match(body.reason, /locked|busy/i);
    blocker.exec("ROLLBACK");
  } finally {
    blocker.close();
  }
});

engineTest("/metrics on the ingest listener counts requests, records and file sizes", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const body = claudeExport([
    toolResult({ session: "s", id: "a", tool: "Bash", timeMs: T0 }),
    toolResult({ session: "s", id: "b", tool: "Read", timeMs: T0 + 1 }),
  ]);
  const sent = await server.ingest("/v1/logs", body, org.ingestKey);
  await sent.body?.cancel();
  const list = await server.get("/v1/sessions/s", org.apiKey);
  assert.ok(list.headers.get("x-request-id"));
  await list.body?.cancel();
  const response = await fetch(`${server.ingestUrl}/metrics`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  assert.match(
    text,
    /agent_telemetry_http_requests_total\{listener="ingest",route="\/v1\/logs",status="200"\} 1/,
  );
  assert.match(
    text,
    /agent_telemetry_http_requests_total\{listener="query",route="\/v1\/sessions\/:id",status="200"\} 1/,
  );
  assert.match(
    text,
    /agent_telemetry_ingested_records_total\{agent="claude-code",kind="tool_call"\} 2/,
  );
  assert.match(text, /agent_telemetry_http_request_duration_seconds_bucket\{.*le="\+Inf"\} \d+/);
  const file = testEngine() === "sqlite" ? "telemetry" : "analytics";
  assert.match(text, new RegExp(`agent_telemetry_database_bytes\\{file="${file}"\\} [1-9]\\d*`));
  assert.match(text, /agent_telemetry_replica_lag_seq \d+/);
  assert.equal(text.includes(org.ingestKey), false);
  assert.equal(text.includes(org.apiKey), false);
});

Deno.test("requests are summed in one info line a minute, each request only at debug", () => {
  let now = 0;
  const written: Record<string, unknown>[] = [];
  const summary = new RequestSummary(() => now, (fields) => written.push(fields));
  summary.add("query", 200);
  summary.add("ingest", 200);
  now = 30_000;
  summary.add("query", 404);
  assert.deepEqual(written, [], "nothing before the minute is over");
  now = SUMMARY_EVERY_MS;
  summary.add("grpc", "UNAVAILABLE");
  assert.deepEqual(written, [{
    seconds: 60,
    requests: { "grpc UNAVAILABLE": 1, "ingest 2xx": 1, "query 2xx": 1, "query 4xx": 1 },
  }]);
  now += 1_000;
  summary.add("query", 200);
  assert.equal(written.length, 1, "the next minute starts empty");
});
