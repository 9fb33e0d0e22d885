/**
 * OTLP metrics decoding and the instrument table, against the real agents'
 * recorded metrics requests (`tests/fixtures/agents/real/`): what each
 * client reported is what the kept samples add up to, whatever the
 * encoding; and hostile points are rejected one by one, not the export.
 */
import assert from "node:assert/strict";
import {
  admitPoint,
  type DecodedMetrics,
  decodeMetrics,
  INSTRUMENTS,
  receiveMetrics,
} from "../src/ingest/metrics/mod.ts";
import { metricPointIdOf } from "../src/store/metric_rows.ts";
import { OtlpDecodeError } from "../src/ingest/otlp/mod.ts";
import { metricsJsonToProtobuf, recordedMetrics, SENDER, totalsOf } from "./_metrics_otlp.ts";

type Json = Record<string, unknown>;

const CLAUDE_RUNS = [
  "claude-code-2.1.330/http-json",
  "claude-code-2.1.330/http-protobuf",
  "claude-code-2.1.330/http-protobuf-gzip",
  "claude-code-2.1.330/http-protobuf-traces",
  "claude-code-2.1.330/grpc-traces",
];
const GEMINI_RUNS = [
  "gemini-cli-0.61.0/http",
  "gemini-cli-0.61.0/http-no-log-prompts",
  "gemini-cli-0.61.0/grpc",
];

/** Every kept sample of one recorded run, and what was not kept. */
async function receivedRun(run: string) {
  const received = (await recordedMetrics(run)).map((request) => receiveMetrics(request.decoded));
  assert.ok(received.length > 0, `${run} holds metrics requests`);
  return {
    samples: received.flatMap((r) => r.samples),
    unusable: received.reduce((n, r) => n + r.unusable, 0),
    unkept: received.flatMap((r) => r.unkept),
  };
}

for (const run of CLAUDE_RUNS) {
  Deno.test(`Claude Code's delta metrics of ${run} add up to what the client reported`, async () => {
    const { samples, unusable, unkept } = await receivedRun(run);
    assert.equal(unusable, 0);
    assert.deepEqual(unkept, [], "every Claude Code instrument sent is one we keep");
    const totals = totalsOf(samples);
    // The scripted Write of "written by harness\n" (one line and its newline): Claude Code counts 2.
    assert.equal(totals["lines/type=added"], 2);
    assert.equal(totals["lines/type=removed"], 0);
    assert.equal(totals["sessions"], 1);
    assert.equal(totals["sessions/type=fresh"], 1);
    // 7 model calls at $0.0081 each, as in its own total_cost_usd.
    assert.equal(totals["cost_usd"], 0.0567);
    assert.equal(totals["cost_usd/model=claude-sonnet-4-5-20250929"], 0.0567);
    assert.equal(totals["tokens/type=input"], 7000);
    assert.equal(totals["tokens/type=output"], 1400);
    assert.equal(totals["tokens/type=cache_read"], 14000);
    assert.equal(totals["tokens/type=cache_creation"], 2800);
    assert.equal(totals["edit_decisions/tool=Write"], 1);
    assert.equal(totals["edit_decisions/decision=accept"], 1);
    assert.equal(totals["edit_decisions/language=Plain text"], 1);
    assert.ok(totals["active_time_s/type=cli"]! > 0, "active time of the CLI");
    assert.equal(totals["active_time_s/type=user"], undefined, "no user time in -p mode");
    const sessions = new Set(samples.map((s) => s.sessionId));
    assert.equal(sessions.size, 1, "one session id on every point");
    assert.match([...sessions][0]!, /^[0-9a-f-]{36}$/);
    assert.ok(samples.every((s) => s.temporality === "delta" && s.agent === "claude-code"));
    assert.ok(
      samples.every((s) => s.agentSystem === "claude-code" && s.agentVersion === "2.1.330"),
    );
  });
}

for (const run of GEMINI_RUNS) {
  Deno.test(`Gemini CLI's cumulative metrics of ${run} add up to what the client reported`, async () => {
    const { samples, unusable, unkept } = await receivedRun(run);
    assert.equal(unusable, 0);
    const totals = totalsOf(samples);
    assert.equal(totals["sessions"], 1);
    // The scripted write_file of "hello from the mock model\n": Gemini counts 1 line added.
    assert.equal(totals["lines/type=added"], 1);
    assert.equal(totals["lines/tool=write_file"], 1);
    assert.equal(totals["tool_calls"], 6);
    assert.equal(totals["tool_calls/tool=run_shell_command"], 4);
    assert.equal(totals["tool_calls/decision=accept"], 5, "the policy-denied call has no decision");
    assert.equal(totals["model_requests/model=gemini-2.5-pro"], 7);
    // 7 calls × 4000 prompt tokens, cached ones included (the logs' model calls take them out).
    assert.equal(totals["tokens/type=input"], 28000);
    assert.equal(totals["tokens/type=cache_read"], 7168);
    assert.equal(totals["tokens/type=output"], 420);
    assert.equal(totals["tokens/type=reasoning"], 175);
    assert.equal(totals["file_operations/type=create"], 1);
    assert.equal(totals["file_operations/type=read"], 1);
    assert.ok(samples.every((s) => s.temporality === "cumulative" && s.startTimeNs !== null));
    assert.ok(samples.every((s) => s.agentVersion === ""), "service.version is Node's");
    assert.equal(new Set(samples.map((s) => s.sessionId)).size, 1);
    const skipped = unkept.filter((u) => u.reason === "skipped_instrument");
    assert.deepEqual(skipped, [{ agent: "gemini-cli", reason: "skipped_instrument", count: 2 }]);
    assert.ok(
      unkept.some((u) => u.reason === "unknown_instrument" && u.count > 0),
      "the latency histograms are counted, not kept",
    );
  });
}

Deno.test("Claude Code's JSON metrics decode to the same points as protobuf, fields in any order", async () => {
  for (const request of await recordedMetrics("claude-code-2.1.330/http-json")) {
    const root = JSON.parse(new TextDecoder().decode(request.body)) as Json;
    for (const reverse of [false, true]) {
      const fromProtobuf = decodeMetrics(metricsJsonToProtobuf(root, { reverse }), "protobuf");
      assert.deepEqual(fromProtobuf, request.decoded, `reverse=${reverse}`);
    }
  }
});

Deno.test("Gemini CLI's JSON metrics decode to the same points as protobuf, histograms included", async () => {
  const [request] = await recordedMetrics("gemini-cli-0.61.0/http");
  const root = JSON.parse(new TextDecoder().decode(request!.body)) as Json;
  const fromJson = request!.decoded;
  for (const reverse of [false, true]) {
    const fromProtobuf = decodeMetrics(metricsJsonToProtobuf(root, { reverse }), "protobuf");
    assert.deepEqual(fromProtobuf, fromJson, `reverse=${reverse}`);
  }
  const histogram = fromJson.points.find((p) => p.metric === "gen_ai.client.token.usage");
  assert.equal(histogram?.kind, "histogram");
  assert.equal(histogram?.count, 7);
  assert.equal(histogram?.value, 28000);
  assert.equal(histogram?.temporality, "cumulative");
});

Deno.test("a retried export yields the same point ids; another actor's do not collide", async () => {
  const [request] = await recordedMetrics("gemini-cli-0.61.0/grpc");
  const ids = (decoded: DecodedMetrics, sender = SENDER) =>
    receiveMetrics(decoded).samples.map((s) => metricPointIdOf(sender, s));
  const first = ids(request!.decoded);
  const retry = ids(decodeMetrics(request!.body, "protobuf"));
  assert.deepEqual(retry, first);
  assert.equal(new Set(first).size, first.length, "distinct series have distinct ids");
  const other = ids(request!.decoded, { ...SENDER, actorId: "act_other" });
  assert.equal(other.filter((id) => first.includes(id)).length, 0);
});

Deno.test("every instrument in the table is unique per agent and reads what its kind has", () => {
  const seen = new Set<string>();
  for (const spec of INSTRUMENTS) {
    const key = `${spec.agent} ${spec.instrument}`;
    assert.ok(!seen.has(key), `${key} is listed once`);
    seen.add(key);
    if (spec.kind === "sum") assert.equal(spec.reads, "value", key);
    else assert.notEqual(spec.reads, "value", key);
  }
});

/** A one-point Claude Code request around `point` (a `dataPoints` item) of `metric`. */
function claudeRequest(point: Json, metric: Json = {}): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({
    resourceMetrics: [{
      resource: {
        attributes: [{ key: "service.name", value: { stringValue: "claude-code" } }],
      },
      scopeMetrics: [{
        scope: { name: "com.anthropic.claude_code" },
        metrics: [{
          name: "claude_code.commit.count",
          sum: {
            aggregationTemporality: 1,
            isMonotonic: true,
            dataPoints: [{
              startTimeUnixNano: "1795488322276000000",
              timeUnixNano: "1795488323253000000",
              asDouble: 1,
              ...point,
            }],
          },
          ...metric,
        }],
      }],
    }],
  }));
}

/** What one point of a request became: kept, or the reason it was not. */
function outcomeOf(body: Uint8Array): string {
  const [point] = decodeMetrics(body, "json").points;
  const admitted = admitPoint(point!);
  return admitted.status === "kept" ? "kept" : `${admitted.status}: ${admitted.reason}`;
}

const HOSTILE_POINTS: { name: string; point?: Json; metric?: Json; outcome: string | RegExp }[] = [
  { name: "an ordinary point", outcome: "kept" },
  {
    name: "a time past 2^63-1 ns",
    point: { timeUnixNano: "9223372036854775808" },
    outcome: "unusable: timeUnixNano out of range: above 2^63-1 ns (2262-04-11)",
  },
  {
    name: "a time of 40 digits",
    point: { timeUnixNano: "1".repeat(40) },
    outcome: /^unusable: timeUnixNano out of range/,
  },
  {
    name: "a start after its time",
    point: { startTimeUnixNano: "1795488323253000001" },
    outcome: "unusable: startTimeUnixNano is after timeUnixNano",
  },
  {
    name: "no time",
    point: { timeUnixNano: "0" },
    outcome: "unusable: a data point has no timeUnixNano",
  },
  {
    name: "NaN",
    point: { asDouble: "NaN" },
    outcome: /^unusable: claude_code.commit.count value out of range: NaN/,
  },
  {
    name: "Infinity",
    point: { asDouble: "Infinity" },
    outcome: /^unusable: claude_code.commit.count value out of range: Infinity/,
  },
  {
    name: "an int64 past 2^53",
    point: { asDouble: undefined, asInt: "9007199254740993" },
    outcome: /^unusable: claude_code.commit.count value out of range: "9007199254740993"/,
  },
  {
    name: "a negative monotonic sum",
    point: { asDouble: -3 },
    outcome:
      "unusable: claude_code.commit.count value out of range: -3 (a monotonic sum is never negative)",
  },
  {
    name: "no value",
    point: { asDouble: undefined },
    outcome: "unusable: claude_code.commit.count: a data point has no value",
  },
  {
    name: "a session id over 256 bytes",
    point: { attributes: [{ key: "session.id", value: { stringValue: "s".repeat(257) } }] },
    outcome: "unusable: session id too long: 257 bytes (at most 256 accepted)",
  },
  {
    name: "a model name over 256 bytes",
    metric: { name: "claude_code.cost.usage" },
    point: { attributes: [{ key: "model", value: { stringValue: "é".repeat(129) } }] },
    outcome: "unusable: model too long: 258 bytes (at most 256 accepted)",
  },
  {
    name: "a stale point (no recorded value)",
    point: { flags: 1 },
    outcome: "ignored: no_recorded_value",
  },
  {
    name: "unspecified temporality",
    metric: {
      sum: {
        aggregationTemporality: 0,
        isMonotonic: true,
        dataPoints: [{ timeUnixNano: "1795488323253000000", asDouble: 1 }],
      },
    },
    outcome: "unusable: claude_code.commit.count: aggregation temporality unspecified",
  },
  {
    name: "a sum instrument sent as a gauge",
    metric: {
      sum: undefined,
      gauge: { dataPoints: [{ timeUnixNano: "1795488323253000000", asDouble: 1 }] },
    },
    outcome: "unusable: claude_code.commit.count sent as a gauge: expected a sum",
  },
  {
    name: "an unknown instrument",
    metric: { name: "claude_code.mystery" },
    outcome: "ignored: unknown_instrument",
  },
];

for (const { name, point, metric, outcome } of HOSTILE_POINTS) {
  Deno.test(`a metrics point with ${name} is ${typeof outcome === "string" ? outcome.split(":")[0] : "unusable"}`, () => {
    const actual = outcomeOf(claudeRequest(point ?? {}, metric));
    if (typeof outcome === "string") assert.equal(actual, outcome);
    else assert.match(actual, outcome);
  });
}

Deno.test("one unusable point leaves the export's other points kept and counts for partialSuccess", () => {
  const body = JSON.parse(new TextDecoder().decode(claudeRequest({}))) as Json;
  const metric =
    ((((body.resourceMetrics as Json[])[0]!.scopeMetrics as Json[])[0]!.metrics) as Json[])[0]!;
  const points = (metric.sum as Json).dataPoints as Json[];
  points.push({ ...points[0]!, timeUnixNano: "1795488324253000000", asDouble: -1 });
  points.push({ ...points[0]!, timeUnixNano: "1795488325253000000", asDouble: 2 });
  const received = receiveMetrics(
    decodeMetrics(new TextEncoder().encode(JSON.stringify(body)), "json"),
  );
  assert.equal(received.samples.length, 2);
  assert.equal(received.unusable, 1);
  assert.match(received.firstReason, /never negative/);
});

const MALFORMED: { name: string; body: Uint8Array; encoding: "json" | "protobuf" }[] = [
  { name: "JSON that is no object", body: new TextEncoder().encode("[1]"), encoding: "json" },
  {
    name: "a JSON metric whose points are no array",
    body: new TextEncoder().encode(
      '{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","sum":{"dataPoints":{}}}]}]}]}',
    ),
    encoding: "json",
  },
  {
    name: "a JSON time that is no integer",
    body: claudeRequest({ timeUnixNano: "12.5" }),
    encoding: "json",
  },
  {
    name: "attribute values nested deeper than 64",
    body: new TextEncoder().encode(JSON.stringify({
      resourceMetrics: [{
        resource: {
          attributes: [{
            key: "deep",
            value: Array.from({ length: 70 }).reduce<Json>(
              (inner) => ({ arrayValue: { values: [inner] } }),
              { stringValue: "x" },
            ),
          }],
        },
      }],
    })),
    encoding: "json",
  },
  {
    name: "protobuf cut inside a message",
    body: metricsJsonToProtobuf(JSON.parse(new TextDecoder().decode(claudeRequest({})))).slice(
      0,
      40,
    ),
    encoding: "protobuf",
  },
  {
    name: "protobuf with field number 0",
    body: new Uint8Array([0x02, 0x00]),
    encoding: "protobuf",
  },
];

for (const { name, body, encoding } of MALFORMED) {
  Deno.test(`a metrics export with ${name} is undecodable (400)`, () => {
    assert.throws(() => decodeMetrics(body, encoding), OtlpDecodeError);
  });
}

Deno.test("exponential histograms and summaries are counted as unsupported, not kept", () => {
  const body = new TextEncoder().encode(JSON.stringify({
    resourceMetrics: [{
      resource: { attributes: [{ key: "service.name", value: { stringValue: "gemini-cli" } }] },
      scopeMetrics: [{
        metrics: [
          { name: "gemini_cli.x", exponentialHistogram: { dataPoints: [{}, {}] } },
          { name: "gemini_cli.y", summary: { dataPoints: [{}] } },
        ],
      }],
    }],
  }));
  const decoded = decodeMetrics(body, "json");
  assert.equal(decoded.points.length, 0);
  const received = receiveMetrics(decoded);
  assert.equal(received.points, 3);
  assert.deepEqual(received.unkept, [{
    agent: "gemini-cli",
    reason: "unsupported_kind",
    count: 3,
  }]);
  const protobuf = new Uint8Array([
    // resource_metrics { scope_metrics { metrics { name "a" exponential_histogram { data_points {} data_points {} } } } }
    0x0a,
    0x11,
    0x12,
    0x0f,
    0x12,
    0x0d,
    0x0a,
    0x01,
    0x61,
    0x52,
    0x04,
    0x0a,
    0x00,
    0x0a,
    0x00,
    0x5a,
    0x02,
    0x0a,
    0x00,
  ]);
  assert.deepEqual(decodeMetrics(protobuf, "protobuf").unsupported, [
    { metric: "a", kind: "exponential_histogram", points: 2 },
    { metric: "a", kind: "summary", points: 1 },
  ]);
});
