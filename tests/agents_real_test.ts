/**
 * Replays every recorded real-agent run (`tests/fixtures/agents/real/`) of
 * every registered scenario into a test server, request by request and byte
 * for byte, and checks the API's view against the scenario's expectations
 * field by field: the live harness's check without npm or network.
 *
 * Recorded times are fixed, the insight windows end now: each server runs on a
 * clock of the test's (`ServeOverrides.clock`, which insight windows and
 * retention read) moved to just after the recorded run once it is replayed,
 * so the replay answers as it did on the day it was recorded.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readRecording, REAL_FIXTURES } from "../scripts/agents/_fixtures.ts";
import { grpcUnary } from "../scripts/agents/_grpc_recorder.ts";
import type { RecordedRequest } from "../scripts/agents/_recorder.ts";
import type { AgentScenario, ExpectedRun, Variant } from "../scripts/agents/_scenario.ts";
import { settledDifferences } from "../scripts/agents/_wait.ts";
import { SCENARIOS } from "../scripts/agents/scenarios.ts";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";

type Json = Record<string, unknown>;

/** The OTLP/HTTP path of each OTLP/gRPC export method (the same signal). */
const SIGNAL_PATHS: Record<string, string> = {
  "/opentelemetry.proto.collector.logs.v1.LogsService/Export": "/v1/logs",
  "/opentelemetry.proto.collector.trace.v1.TraceService/Export": "/v1/traces",
  "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export": "/v1/metrics",
};

/**
 * Sends one recorded request to the listener it was sent to, as the agent sent
 * it; answers with the status in the recording's terms (gRPC: 200 for OK).
 */
async function post(server: TestServer, org: TestOrg, request: RecordedRequest): Promise<number> {
  const authorization = `Bearer ${org.ingestKey}`;
  if (request.transport === "grpc") {
    assert.ok(server.grpcUrl, "the test server runs a gRPC listener");
    const headers: Record<string, string> = { authorization };
    if (request.contentEncoding !== null) headers["grpc-encoding"] = request.contentEncoding;
    const answer = await grpcUnary(server.grpcUrl, request.path, headers, request.body);
    return answer.grpcStatus === 0 ? 200 : 500;
  }
  const headers = new Headers({ "content-type": request.contentType, authorization });
  if (request.contentEncoding !== null) headers.set("content-encoding", request.contentEncoding);
  const response = await fetch(server.ingestUrl + request.path, {
    method: "POST",
    headers,
    body: request.body as Uint8Array<ArrayBuffer>,
  });
  await response.body?.cancel();
  return response.status;
}

async function replay(server: TestServer, org: TestOrg, requests: RecordedRequest[]) {
  for (const [i, request] of requests.entries()) {
    const status = await post(server, org, request);
    assert.deepEqual(status, request.status, `request ${i} (${request.path})`);
  }
}

/** Traces first, then everything else, each group in its recorded order. */
function tracesFirst(requests: RecordedRequest[]): RecordedRequest[] {
  const isTrace = (r: RecordedRequest) => (SIGNAL_PATHS[r.path] ?? r.path) === "/v1/traces";
  return [...requests.filter(isTrace), ...requests.filter((r) => !isTrace(r))];
}

/** A server's clock that a test moves: the real time until {@link RecordingClock.moveTo}. */
class RecordingClock {
  #offset = 0;
  readonly now = (): number => Date.now() + this.#offset;

  /** From now on the clock reads `ms`, running on. */
  moveTo(ms: number): void {
    this.#offset = ms - Date.now();
  }
}

/** A test server on a {@link RecordingClock}. */
async function startRecordingServer(): Promise<TestServer & { clock: RecordingClock }> {
  const clock = new RecordingClock();
  const server = await startTestServer({ overrides: { clock: clock.now } });
  return Object.assign(server, { clock });
}

/**
 * Moves the server's clock to one hour after the last activity it holds for
 * `org`, so the 7-day insight windows cover the recorded run.
 */
async function toRecordingTime(server: TestServer & { clock: RecordingClock }, org: TestOrg) {
  const { status, body } = await server.getJson("/v1/sessions?limit=500", org.apiKey);
  assert.deepEqual(status, 200);
  const lastSeen = Math.max(...(body.data as Json[]).map((s) => Date.parse(String(s.last_seen))));
  if (Number.isFinite(lastSeen)) server.clock.moveTo(lastSeen + 3_600_000);
}

async function differences(
  server: TestServer & { clock: RecordingClock },
  org: TestOrg,
  expected: ExpectedRun,
) {
  await toRecordingTime(server, org);
  return await settledDifferences(server.queryUrl, org.apiKey, expected);
}

/**
 * Everything the API answers about `org`'s run, without the ids that differ
 * between organizations: session details, every tool call detail, the cost insight.
 */
async function apiAnswers(
  server: TestServer & { clock: RecordingClock },
  org: TestOrg,
): Promise<unknown> {
  const get = async (path: string) => {
    const { status, body } = await server.getJson(path, org.apiKey);
    assert.deepEqual(status, 200, path);
    return body as Json;
  };
  const strip = (row: Json) => {
    const { id: _id, actor_id: _actor, ...rest } = row;
    return rest;
  };
  const list = await get("/v1/sessions?limit=500");
  const sessions = [];
  for (const session of list.data as Json[]) {
    const detail = await get(`/v1/sessions/${encodeURIComponent(String(session.session_id))}`);
    const calls = [];
    for (const call of detail.tool_calls as Json[]) {
      calls.push(strip(await get(`/v1/tool-calls/${encodeURIComponent(String(call.id))}`)));
    }
    // A flag names the call's row id where the agent sends no call id (Gemini CLI): by position.
    const rowIds = (detail.tool_calls as Json[]).map((call) => call.id);
    const flags = (detail.risk_flags as Json[]).map((flag) =>
      rowIds.includes(flag.tool_call_id)
        ? { ...flag, tool_call_id: `call ${rowIds.indexOf(flag.tool_call_id)}` }
        : flag
    );
    sessions.push({
      session: strip(detail.session as Json),
      calls,
      risk_flags: flags,
      external_domains: detail.external_domains,
    });
  }
  await toRecordingTime(server, org);
  const cost = await get("/v1/insights/cost?window=7d");
  return { sessions, cost: { summary: cost.summary, breakdown: cost.breakdown } };
}

function recordingDir(scenario: AgentScenario, variant: Variant): string {
  return join(REAL_FIXTURES, `${scenario.agent}-${scenario.version}`, variant.name);
}

for (const scenario of SCENARIOS) {
  for (const variant of scenario.variants) {
    const dir = recordingDir(scenario, variant);
    if (!existsSync(join(dir, "requests.json"))) continue;
    const label = `${scenario.agent}-${scenario.version} ${variant.name}`;

    engineTest(`${label}: the replayed recording serves the expected view`, async () => {
      const requests = await readRecording(dir);
      await using server = await startRecordingServer();
      const org = await server.createOrg();
      await replay(server, org, requests);
      assert.deepEqual(await differences(server, org, scenario.expected(variant)), []);
    });

    const requests = JSON.parse(Deno.readTextFileSync(join(dir, "requests.json"))) as {
      path: string;
    }[];
    if (!requests.some((r) => (SIGNAL_PATHS[r.path] ?? r.path) === "/v1/traces")) continue;

    engineTest(
      `${label}: the run's requests reordered so that traces come first get the same API answers`,
      async () => {
        const recorded = await readRecording(dir);
        await using server = await startRecordingServer();
        const inOrder = await server.createOrg("InOrder");
        const reordered = await server.createOrg("Reordered");
        await replay(server, inOrder, recorded);
        await replay(server, reordered, tracesFirst(recorded));
        const expected = scenario.expected(variant);
        assert.deepEqual(await differences(server, inOrder, expected), []);
        assert.deepEqual(await differences(server, reordered, expected), []);
        assert.deepEqual(await apiAnswers(server, reordered), await apiAnswers(server, inOrder));
      },
    );
  }
}

Deno.test("every registered scenario has a recording of each variant", () => {
  const missing = SCENARIOS.flatMap((scenario) =>
    scenario.variants.filter((variant) =>
      !existsSync(join(recordingDir(scenario, variant), "requests.json"))
    ).map((variant) => `${scenario.agent}-${scenario.version}/${variant.name}`)
  );
  assert.deepEqual(missing, [], "record them with `deno task agents --agent NAME --record`");
});

engineTest(
  "a Codex subagent's session names its parent and the parent lists it, per organization, retries changing nothing",
  async () => {
    const requests = await readRecording(join(REAL_FIXTURES, "codex-mcp-0.169.0", "http-json"));
    await using server = await startRecordingServer();
    const a = await server.createOrg("A");
    const b = await server.createOrg("B");
    await replay(server, a, requests);
    await replay(server, b, requests);
    await replay(server, a, requests); // an exporter's retry of everything
    for (const org of [a, b]) {
      const list = (await server.getJson("/v1/sessions?limit=500", org.apiKey)).body.data as Json[];
      assert.equal(list.length, 2);
      const child = list.find((s) => s.parent_session_id !== null)!;
      const parent = list.find((s) => s.parent_session_id === null)!;
      assert.equal(child.parent_session_id, parent.session_id);
      const detail = (await server.getJson(`/v1/sessions/${parent.session_id}`, org.apiKey)).body;
      assert.deepEqual(detail.child_sessions, [child], "the child, once, with its counts and cost");
      assert.equal(detail.session.parent_session_id, null);
      const childDetail = (await server.getJson(`/v1/sessions/${child.session_id}`, org.apiKey))
        .body;
      assert.deepEqual(childDetail.child_sessions, []);
      // Who ran each call: Codex's agent path.
      const names = async (session: unknown) =>
        (await server.getJson(`/v1/tool-calls?session_id=${session}&limit=500`, org.apiKey)).body
          .data.map((call: Json) => call.id).length;
      assert.ok(await names(child.session_id) > 0);
      // A later spawn message naming another parent for the same child changes nothing.
      const other = await fetch(`${server.ingestUrl}/v1/logs`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${org.ingestKey}` },
        body: JSON.stringify({
          resourceLogs: [{
            resource: {
              attributes: [{ key: "service.name", value: { stringValue: "codex_exec" } }],
            },
            scopeLogs: [{
              scope: { name: "codex_otel.agent_communication" },
              logRecords: [{
                timeUnixNano: `${BigInt(Date.parse(String(child.last_seen))) * 1_000_000n}`,
                body: { stringValue: "agent communication" },
                attributes: [
                  ["event.name", "codex.agent_communication"],
                  ["kind", "spawn"],
                  ["state", "send"],
                  ["sender_thread_id", "someone-else"],
                  ["receiver_thread_id", String(child.session_id)],
                ].map(([key, value]) => ({ key, value: { stringValue: value } })),
              }],
            }],
          }],
        }),
      });
      assert.equal(other.status, 200, await other.text());
      const relinked = (await server.getJson(`/v1/sessions/${child.session_id}`, org.apiKey)).body;
      assert.equal(relinked.session.parent_session_id, parent.session_id, "the first parent wins");
      for (
        const [session, agent] of [[parent.session_id, "/root"], [
          child.session_id,
          "/root/checker",
        ]]
      ) {
        const calls = (await server.getJson(`/v1/sessions/${session}`, org.apiKey)).body.tool_calls;
        for (const call of calls as Json[]) {
          const full = (await server.getJson(`/v1/tool-calls/${call.id}`, org.apiKey)).body;
          assert.equal(full.agent_name, agent, `${call.tool_name} in ${session}`);
        }
      }
    }
  },
);
