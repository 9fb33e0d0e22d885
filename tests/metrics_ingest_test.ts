/**
 * Metrics ingest (issue #18, step 1): the real agents' recorded metrics
 * requests, replayed over OTLP/HTTP (JSON, protobuf, gzip) and OTLP/gRPC into
 * a test server on each engine, store their kept points in `metric_points`,
 * and what those rows add up to (through `sql/metrics/interval_deltas.sql`,
 * run on the store itself) is what the clients reported. A retried export
 * stores nothing twice; instruments we do not keep are counted in `/metrics`.
 * The analytics replica copies the points exactly and computes the same deltas.
 */
import assert from "node:assert/strict";
import deltasSql from "../sql/metrics/interval_deltas.sql" with { type: "text" };
import { readRecording, REAL_FIXTURES } from "../scripts/agents/_fixtures.ts";
import { grpcUnary } from "../scripts/agents/_grpc_recorder.ts";
import type { RecordedRequest } from "../scripts/agents/_recorder.ts";
import { receiveMetrics } from "../src/ingest/metrics/mod.ts";
import { Replica } from "../src/analytics/replica.ts";
import { namedSql, parseNamedSql } from "../src/store/named_sql.ts";
import { dataPaths } from "../src/store/sqlite/data_dir.ts";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { storedPoints, storedTotals as totalsOf } from "./_metric_points.ts";
import { recordedMetrics } from "./_metrics_otlp.ts";
import { join } from "node:path";

const INTERVAL_DELTAS = namedSql(parseNamedSql(deltasSql), "interval_deltas");

/** Every point of a fresh replica of the server's store: id, exact time and delta. */
async function replicaPoints(server: TestServer) {
  const path = join(await Deno.makeTempDir({ prefix: "metrics-replica-" }), "analytics.duckdb");
  const replica = await Replica.open({
    path,
    source: server.database === null
      ? { engine: "sqlite", path: dataPaths(server.dir).telemetry }
      : { engine: "postgres", url: server.database },
    quiet: true,
  });
  try {
    await replica.catchUp();
    const sql = `SELECT p.id, CAST(p.time_ns AS VARCHAR) AS time_ns, d.delta
      FROM metric_points AS p JOIN (${INTERVAL_DELTAS.replace(/;\s*$/, "")}) AS d ON d.id = p.id
      ORDER BY p.id`;
    const [rows] = await replica.read([{ sql, params: {} }], Date.now() + 30_000);
    return rows!;
  } finally {
    await replica.close();
    await Deno.remove(join(path, ".."), { recursive: true });
  }
}

/** Sends one recorded request as the agent sent it; the status in HTTP terms (gRPC OK is 200). */
async function post(server: TestServer, org: TestOrg, request: RecordedRequest): Promise<number> {
  const authorization = `Bearer ${org.ingestKey}`;
  if (request.transport === "grpc") {
    const headers: Record<string, string> = { authorization };
    if (request.contentEncoding !== null) headers["grpc-encoding"] = request.contentEncoding;
    const answer = await grpcUnary(server.grpcUrl!, request.path, headers, request.body);
    return answer.grpcStatus === 0 ? 200 : 500;
  }
  const headers = new Headers({ "content-type": request.contentType, authorization });
  if (request.contentEncoding !== null) headers.set("content-encoding", request.contentEncoding);
  const response = await fetch(server.ingestUrl + request.path, {
    method: "POST",
    headers,
    body: request.body as Uint8Array<ArrayBuffer>,
  });
  const text = await response.text();
  assert.doesNotMatch(text, /rejected/i, "no partial success");
  return response.status;
}

/** Replays the run's metrics requests; answers with how many points they keep. */
async function replayMetrics(server: TestServer, org: TestOrg, run: string): Promise<number> {
  const requests = (await readRecording(join(REAL_FIXTURES, run)))
    .filter((request) => request.path.includes("metrics"));
  assert.ok(requests.length > 0, `${run} has metrics requests`);
  for (const [i, request] of requests.entries()) {
    assert.equal(await post(server, org, request), 200, `${run} request ${i}`);
  }
  const kept = (await recordedMetrics(run)).map((r) => receiveMetrics(r.decoded).samples.length);
  return kept.reduce((a, b) => a + b, 0);
}

const CLAUDE_RUNS = [
  "claude-code-2.1.330/http-json",
  "claude-code-2.1.330/http-protobuf-gzip",
  "claude-code-2.1.330/grpc-traces",
];
const GEMINI_RUNS = ["gemini-cli-0.61.0/http", "gemini-cli-0.61.0/grpc"];

for (const run of CLAUDE_RUNS) {
  engineTest(`metrics ingest: ${run} stores Claude Code's delta points once`, async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const kept = await replayMetrics(server, org, run);
    const points = await storedPoints(server);
    assert.equal(points.length, kept, "every kept point stored, once");
    assert.ok(points.every((p) => p.org_id === org.orgId && p.actor_id === org.actorId));
    assert.ok(points.every((p) => p.agent === "claude-code" && p.temporality === "delta"));
    assert.equal(new Set(points.map((p) => p.session_id)).size, 1, "one session on every point");
    assert.ok(points.every((p) => p.ts === Math.floor(Number(BigInt(p.time_ns) / 1_000_000n))));
    const totals = totalsOf(points);
    // The scripted Write of "written by harness\n": Claude Code counts 2 lines added.
    assert.equal(totals["lines/type=added"], 2);
    assert.equal(totals["sessions"], 1);
    assert.equal(totals["cost_usd"], 0.0567);
    assert.equal(totals["tokens/type=input"], 7000);
    assert.equal(totals["edit_decisions/decision=accept"], 1);
    assert.equal(totals["edit_decisions/language=Plain text"], 1);

    await replayMetrics(server, org, run);
    const again = await storedPoints(server);
    assert.deepEqual(again, points, "a retried export stores nothing twice");
  });
}

for (const run of GEMINI_RUNS) {
  engineTest(`metrics ingest: ${run} stores Gemini CLI's cumulative points once`, async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const kept = await replayMetrics(server, org, run);
    const points = await storedPoints(server);
    assert.equal(points.length, kept, "every kept point stored, once");
    assert.ok(points.every((p) => p.temporality === "cumulative" && p.start_time_ns !== null));
    // Nanosecond times are stored exactly (past 2^53: a double would round them).
    assert.ok(
      points.every((p) => /[1-9]\d{18}$/.test(p.time_ns) && !p.time_ns.endsWith("000000000")),
    );
    const totals = totalsOf(points);
    // The scripted write_file of "hello from the mock model\n": Gemini counts 1 line added.
    assert.equal(totals["lines/type=added"], 1);
    assert.equal(totals["tool_calls"], 6);
    assert.equal(totals["tokens/type=input"], 28000);
    assert.equal(totals["model_requests/model=gemini-2.5-pro"], 7);

    await replayMetrics(server, org, run);
    assert.deepEqual(await storedPoints(server), points, "a retried export stores nothing twice");
    assert.deepEqual(
      await replicaPoints(server),
      points.map((p) => ({ id: p.id, time_ns: p.time_ns, delta: p.delta })),
      "the replica holds every point, times exact, with the store's deltas",
    );

    const scrape = await (await fetch(`${server.ingestUrl}/metrics`)).text();
    const counter = (name: string, labels: string) =>
      Number(scrape.match(new RegExp(`^${name}\\{${labels}\\} (\\d+)$`, "m"))?.[1] ?? 0);
    assert.equal(
      counter("agent_telemetry_ingested_records_total", 'agent="gemini-cli",kind="metric_point"'),
      2 * kept,
    );
    assert.ok(
      counter(
        "agent_telemetry_unmapped_records_total",
        'agent="gemini-cli",reason="unknown_instrument"',
      ) > 0,
      "instruments we do not keep are counted",
    );
  });
}

/** A Claude Code `commit.count` export with the given points (delta, monotonic). */
function commitExport(points: Record<string, unknown>[]) {
  return {
    resourceMetrics: [{
      resource: { attributes: [{ key: "service.name", value: { stringValue: "claude-code" } }] },
      scopeMetrics: [{
        scope: { name: "com.anthropic.claude_code" },
        metrics: [{
          name: "claude_code.commit.count",
          sum: {
            aggregationTemporality: 1,
            isMonotonic: true,
            dataPoints: points.map((point) => ({
              startTimeUnixNano: "1795488322276000000",
              attributes: [{ key: "session.id", value: { stringValue: "s-commits" } }],
              ...point,
            })),
          },
        }],
      }],
    }],
  };
}

engineTest(
  "metrics ingest: an unusable point is a partial success; the others are stored",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const body = commitExport([
      { timeUnixNano: "1795488323253000000", asDouble: 1 },
      { timeUnixNano: "1795488324253000000", asDouble: -1 },
      { timeUnixNano: "1795488325253000000", asDouble: 2 },
    ]);
    const response = await server.ingest("/v1/metrics", body, org.ingestKey);
    assert.equal(response.status, 200);
    const answer = await response.json();
    assert.equal(answer.partialSuccess.rejectedDataPoints, 1);
    assert.match(answer.partialSuccess.errorMessage, /1 unusable data point.*never negative/);
    const points = await storedPoints(server);
    const stored = points.map((p) => [p.measure, p.session_id, p.value]);
    stored.sort((a, b) => (a[2] as number) - (b[2] as number));
    assert.deepEqual(stored, [["commits", "s-commits", 1], ["commits", "s-commits", 2]]);

    // A JSON body is routed by its top key: metrics posted to /v1/logs are metrics.
    const routed = await server.ingest(
      "/v1/logs",
      commitExport([{ timeUnixNano: "1795488326253000000", asDouble: 3 }]),
      org.ingestKey,
    );
    assert.equal(routed.status, 200, await routed.text());
    assert.equal((await storedPoints(server)).length, 3);
  },
);
