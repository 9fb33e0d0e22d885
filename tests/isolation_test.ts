/**
 * Organization isolation that can fail: both organizations hold data, with
 * the same session id, and names, ids, domains and times that sort on both
 * sides of each other. An organization's answers must not change when
 * another organization's data arrives, on every list, detail, facet,
 * insight and the fleet, on both engines.
 */
import assert from "node:assert/strict";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { apiRequest, claudeExport, toolDecision, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

const MINUTE = 60_000;

/** One organization's telemetry; `side` 0 or 1 interleaves names and times with the other's. */
function telemetry(side: 0 | 1, round: number) {
  const t = (i: number) => T0 + round * 60 * MINUTE + (2 * i + side) * MINUTE;
  const letter = (i: number) => String.fromCharCode(97 + 2 * i + side); // a c e … | b d f …
  const shell = side === 0
    ? [`curl -s https://${letter(0)}.example.com/x`, "cat .env"]
    : [`wget https://${letter(0)}.example.com/y`, "rm -rf /srv/data"];
  return claudeExport([
    toolResult({
      session: "shared",
      id: `s${side}r${round}-1`,
      tool: "Bash",
      timeMs: t(0),
      input: { command: shell[0] },
    }),
    toolResult({
      session: "shared",
      id: `s${side}r${round}-2`,
      tool: `${letter(1)}_tool`,
      timeMs: t(1),
      success: side === 1,
      error: side === 1 ? undefined : "failed",
    }),
    toolResult({
      session: `sess-${letter(2)}`,
      id: `s${side}r${round}-3`,
      tool: "Bash",
      timeMs: t(2),
      input: { command: shell[1] },
    }),
    toolResult({
      session: `sess-${letter(2)}`,
      id: `s${side}r${round}-4`,
      tool: side === 0 ? "WebFetch" : `mcp__srv__${letter(3)}`,
      timeMs: t(3),
      input: side === 0 ? { url: `https://${letter(3)}.example.org/doc` } : { q: "x" },
    }),
    toolDecision({
      session: `sess-${letter(4)}`,
      id: `s${side}r${round}-5`,
      tool: "Write",
      timeMs: t(4),
      decision: "reject",
    }),
    toolResult({
      session: `sess-${letter(4)}`,
      id: `s${side}r${round}-6`,
      tool: "Read",
      timeMs: t(5),
      input: {
        file_path: side === 0 ? "/home/u/.ssh/id_rsa" : "/repo/README.md",
        token: side === 1 ? `ghp_${"Zq8".repeat(12)}` : undefined,
      },
    }),
    // In the session id both organizations use: B's flagged command, and a call
    // rejected in round 0 whose result replaces it in round 1 (the session's
    // per-actor rows are then rebuilt: only this organization's may be).
    ...(side === 1
      ? [toolResult({
        session: "shared",
        id: `s${side}r${round}-7`,
        tool: "Bash",
        timeMs: t(7),
        input: { command: "rm -rf /srv/shared-cache" },
      })]
      : []),
    round === 0
      ? toolDecision({
        session: "shared",
        id: `s${side}-replaced`,
        tool: "Edit",
        timeMs: t(8),
        decision: "reject",
      })
      : toolResult({ session: "shared", id: `s${side}-replaced`, tool: "Edit", timeMs: t(8) }),
    apiRequest({
      session: "shared",
      timeMs: t(6),
      model: `model-${letter(6)}`,
      costUsd: 0.25 + side,
      requestId: `r${side}-${round}`,
    }),
  ], side === 0 ? "claude-code" : `claude-code-${letter(7)}`);
}

const INSIGHTS = ["activity", "top-tools", "outliers", "cost", "risk", "domains"];

/** Every answer an organization can get, keyed by path (insight windows left out: they move with the clock). */
async function everything(
  server: TestServer,
  org: TestOrg,
  other: TestOrg,
): Promise<Map<string, unknown>> {
  const answers = new Map<string, unknown>();
  const read = async (path: string) => {
    const { status, body } = await server.getJson(path, org.apiKey);
    if (body && typeof body === "object" && "window" in body) delete body.window;
    answers.set(path, { status, body });
    return body;
  };
  const pages = async (base: string) => {
    let path = base;
    for (let i = 0; i < 50; i++) {
      const body = await read(path);
      if (!body.next_cursor) return;
      path = `${base}&cursor=${encodeURIComponent(body.next_cursor)}`;
    }
  };
  const sessions = await read("/v1/sessions?limit=500");
  await pages("/v1/sessions?limit=1");
  for (
    const filter of [
      "agent=claude-code",
      "agent=claude-code-h",
      "domain=a.example.com",
      "domain=b.example.com",
      `actor=${other.actorId}`,
      `actor=${org.actorId}`,
    ]
  ) {
    await read(`/v1/sessions?${filter}`);
  }
  await read("/v1/sessions/facets");
  for (const id of ["shared", "sess-a", "sess-b", "sess-c", "sess-d", "sess-e", "sess-f"]) {
    await read(`/v1/sessions/${id}`);
  }
  const calls = await read("/v1/tool-calls?limit=500");
  await pages("/v1/tool-calls?limit=2");
  for (
    const filter of [
      "session_id=shared",
      "tool_name=Bash",
      "tool_name=a_tool",
      "tool_name=b_tool",
      "tool_type=mcp",
      "category=web_fetch",
      "category=mcp",
      "outcome=error",
      "outcome=rejected",
      `actor=${other.actorId}`,
      `team=${org.actorId},${other.actorId}`,
    ]
  ) {
    await pages(`/v1/tool-calls?limit=3&${filter}`);
  }
  await read("/v1/tool-calls/facets");
  for (const call of calls.data) await read(`/v1/tool-calls/${call.id}`);
  await read("/v1/fleet");
  await read("/v1/fleet?silent_days=1");
  for (const insight of INSIGHTS) {
    for (const window of ["window=7d", "window=30d&granularity=weekly"]) {
      await read(`/v1/insights/${insight}?${window}`);
    }
  }
  assert.ok(sessions.data.length > 0 && calls.data.length > 0, "the organization has data");
  const activity = answers.get("/v1/insights/activity?window=7d") as {
    body: { summary: { total_calls: number } };
  };
  assert.ok(activity.body.summary.total_calls > 0, "the insights' window holds the data");
  return answers;
}

async function send(server: TestServer, org: TestOrg, body: unknown) {
  const response = await server.ingest("/v1/logs", body, org.ingestKey);
  assert.equal(response.status, 200, await response.text());
}

engineTest(
  "an organization's every answer is the same whatever another organization stores",
  async () => {
    await using server = await startTestServer();
    const a = await server.createOrg("A");
    const b = await server.createOrg("B");
    await send(server, a, telemetry(0, 0));
    const aAlone = await everything(server, a, b);
    await send(server, b, telemetry(1, 0));
    const bAlone = await everything(server, b, a);
    assert.deepEqual(await everything(server, a, b), aAlone, "A's answers after B's data arrived");
    await send(server, a, telemetry(0, 1));
    assert.deepEqual(await everything(server, b, a), bAlone, "B's answers after more of A's data");
    // The flagged command is B's alone, in the session id both use.
    const shared = async (org: TestOrg) =>
      (await server.getJson("/v1/sessions/shared", org.apiKey)).body;
    assert.deepEqual((await shared(a)).risk_flags, []);
    assert.ok((await shared(b)).risk_flags.length > 0, "B's rm -rf is flagged");
    // The other organization's ids are unknown here, not served.
    const bCalls = (await server.getJson("/v1/tool-calls?limit=500", b.apiKey)).body.data;
    for (const call of bCalls) {
      const { status, body } = await server.getJson(`/v1/tool-calls/${call.id}`, a.apiKey);
      assert.equal(status, 404);
      assert.equal(body.error.code, "not_found");
    }
    for (const id of ["sess-b", "sess-d", "sess-f"]) {
      assert.equal((await server.getJson(`/v1/sessions/${id}`, a.apiKey)).status, 404);
    }
  },
);
