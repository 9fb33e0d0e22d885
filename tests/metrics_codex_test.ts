/**
 * Codex CLI's OTLP metrics (issue #18): the recorded real run
 * (`tests/fixtures/agents/real/codex-0.169.0/`, `[otel] metrics_exporter` on)
 * replayed into a test server on each engine stores the instruments we keep
 * as delta points, and what they add up to is what the scripted mock model
 * made Codex do (`codexScript` in `scripts/agents/codex.ts`): one thread, one
 * turn, a model request per scripted response, every scripted tool call and
 * the mocked usage per response. The ~50 other instruments are counted, not
 * stored.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readRecording, REAL_FIXTURES } from "../scripts/agents/_fixtures.ts";
import { codexScript } from "../scripts/agents/codex.ts";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { counterValue, storedPoints, storedTotals } from "./_metric_points.ts";
import { recordedMetrics } from "./_metrics_otlp.ts";

const RUNS = ["codex-0.169.0/http-json", "codex-0.169.0/http-protobuf"];

/** The Codex instruments instruments.ts keeps, sorted. */
const KEPT = [
  "codex.api_request",
  "codex.conversation.turn.count",
  "codex.thread.started",
  "codex.tool.call",
  "codex.turn.token_usage",
];
/** Known and deliberately not kept (the same calls as codex.tool.call, per turn). */
const SKIPPED = ["codex.turn.tool.call"];

/** Posts the run's recorded metrics requests as Codex sent them; each must be stored whole. */
async function replayMetrics(server: TestServer, org: TestOrg, run: string): Promise<void> {
  const requests = (await readRecording(join(REAL_FIXTURES, run)))
    .filter((request) => request.path === "/v1/metrics");
  assert.ok(requests.length > 0, `${run} holds metrics requests`);
  for (const [i, request] of requests.entries()) {
    const response = await fetch(server.ingestUrl + request.path, {
      method: "POST",
      headers: { "content-type": request.contentType, authorization: `Bearer ${org.ingestKey}` },
      body: request.body as Uint8Array<ArrayBuffer>,
    });
    const text = await response.text();
    assert.equal(response.status, 200, `${run} request ${i}: ${text}`);
    assert.doesNotMatch(text, /rejected/i, `${run} request ${i}: no partial success`);
  }
}

for (const run of RUNS) {
  engineTest(`Codex metrics: ${run} stores what the client reported of the run`, async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    await replayMetrics(server, org, run);
    const points = await storedPoints(server);

    const sent = (await recordedMetrics(run)).flatMap((request) => request.decoded.points);
    const sentKept = sent.filter((point) => KEPT.includes(point.metric));
    assert.equal(points.length, sentKept.length, "every point of a kept instrument stored, once");
    assert.deepEqual([...new Set(points.map((p) => p.instrument))].sort(), KEPT);
    for (const point of points) {
      assert.equal(point.org_id, org.orgId);
      assert.equal(point.actor_id, org.actorId);
      assert.equal(point.agent, "codex");
      assert.equal(point.agent_system, "codex_exec");
      assert.equal(point.agent_version, "0.169.0");
      assert.equal(point.temporality, "delta");
      assert.notEqual(point.start_time_ns, null);
      // Codex names no session or conversation on its metrics, on points or resource.
      assert.equal(point.session_id, "");
    }

    const { model, calls, usage, responses } = codexScript;
    const byTool = (tool: string) => calls.filter((call) => call.tool === tool).length;
    // Token kinds overlap (input holds cached_input, total holds all): their sums mean nothing.
    const {
      tokens: _allKinds,
      [`tokens/model=${model}`]: _allKindsOfModel,
      ...totals
    } = storedTotals(points);
    assert.deepEqual(totals, {
      "sessions": 1,
      [`sessions/model=${model}`]: 1,
      "turns": 1,
      [`turns/model=${model}`]: 1,
      "model_requests": responses,
      [`model_requests/model=${model}`]: responses,
      // Refused by the exec policy or not, every scripted call counts.
      "tool_calls": calls.length,
      [`tool_calls/model=${model}`]: calls.length,
      "tool_calls/tool=exec_command": byTool("exec_command"),
      "tool_calls/tool=apply_patch": byTool("apply_patch"),
      // The mocked usage of every response, as OpenAI reports it (input holds the cached part).
      "tokens/type=input": responses * usage.input,
      "tokens/type=cache_read": responses * usage.cached,
      "tokens/type=cache_creation": 0,
      "tokens/type=output": responses * usage.output,
      "tokens/type=reasoning": responses * usage.reasoning,
      "tokens/type=total": responses * (usage.input + usage.output),
    });

    await replayMetrics(server, org, run);
    assert.deepEqual(await storedPoints(server), points, "a retried export stores nothing twice");

    const scrape = await (await fetch(`${server.ingestUrl}/metrics`)).text();
    const count = (name: string, labels: string) => counterValue(scrape, name, labels);
    const sentSkipped = sent.filter((point) => SKIPPED.includes(point.metric)).length;
    assert.ok(sentSkipped > 0, `${run} sends ${SKIPPED.join(", ")}`);
    assert.equal(
      count("agent_telemetry_ingested_records_total", 'agent="codex",kind="metric_point"'),
      2 * points.length,
    );
    assert.equal(
      count("agent_telemetry_unmapped_records_total", 'agent="codex",reason="skipped_instrument"'),
      2 * sentSkipped,
    );
    assert.equal(
      count("agent_telemetry_unmapped_records_total", 'agent="codex",reason="unknown_instrument"'),
      2 * (sent.length - sentKept.length - sentSkipped),
      "every other instrument counted as unknown",
    );
  });
}
