import assert from "node:assert/strict";
import { generateExports } from "../src/demo/mod.ts";
import { engineTest, startTestServer, type TestServer } from "./_harness.ts";
import { loadScenario, T0 } from "./_scenario.ts";
import { claudeExport, toolResult } from "./_otlp.ts";

const iso = (ms: number) => new Date(ms).toISOString();

engineTest("GET /v1/sessions lists whole sessions newest first with every field", async () => {
  await using server = await startTestServer();
  const { org, actorB } = await loadScenario(server);
  const { status, body } = await server.getJson("/v1/sessions", org.apiKey);
  assert.equal(status, 200);
  assert.deepEqual(body.data.map((s: { session_id: string }) => s.session_id), ["s3", "s2", "s1"]);
  assert.equal("next_cursor" in body, false);
  assert.deepEqual(body.data[2], {
    session_id: "s1",
    actor_id: org.actorId,
    actor_name: "dev",
    first_seen: iso(T0),
    last_seen: iso(T0 + 2000),
    tool_call_count: 3,
    agent_system: "claude-code",
    agent_version: "2.1.240",
    model: "",
    error_count: 1,
    success_count: 2,
    total_duration_ms: 2000,
    cost_usd: 0.5,
    estimated_cost_usd: 0,
    cost_source: "reported",
    tags: [],
    parent_session_id: null,
    repository: "",
    dimensions: {},
  });
  const s2 = body.data[1];
  assert.equal(s2.actor_id, actorB.actorId);
  assert.equal(s2.tool_call_count, 2, "rejected calls count as tool calls");
  assert.equal(s2.error_count, 0, "rejected calls are never errors");
  assert.equal(s2.success_count, 1);
  assert.equal(s2.cost_usd, 0.25);
});

engineTest(
  "GET /v1/sessions builds sessions from matching calls only, cost from the whole session",
  async (t) => {
    await using server = await startTestServer();
    const { org, actorB } = await loadScenario(server);
    await t.step("time window", async () => {
      const path = `/v1/sessions?after=${iso(T0 + 1000)}&before=${iso(T0 + 10_000)}`;
      const { body } = await server.getJson(path, org.apiKey);
      assert.deepEqual(body.data.map((s: { session_id: string }) => s.session_id), ["s2", "s1"]);
      const s1 = body.data[1];
      assert.equal(s1.first_seen, iso(T0 + 1000));
      assert.equal(s1.last_seen, iso(T0 + 2000));
      assert.equal(s1.tool_call_count, 2);
      assert.equal(s1.error_count, 1);
      assert.equal(s1.success_count, 1);
      assert.equal(s1.total_duration_ms, 1000);
      assert.equal(s1.cost_usd, 0.5, "cost covers the whole session regardless of filters");
      assert.equal(body.data[0].tool_call_count, 1);
    });
    await t.step("actor", async () => {
      const { body } = await server.getJson(`/v1/sessions?actor=${actorB.actorId}`, org.apiKey);
      assert.deepEqual(body.data.map((s: { session_id: string }) => s.session_id), ["s2"]);
    });
    await t.step("team repeated, comma-separated, mixed, with blanks and duplicates", async () => {
      for (
        const query of [
          `team=${org.actorId}&team=${actorB.actorId}`,
          `team=${org.actorId},${actorB.actorId}`,
          `team=${org.actorId},,%20&team=${actorB.actorId}&team=${org.actorId}`,
        ]
      ) {
        const { body } = await server.getJson(`/v1/sessions?${query}`, org.apiKey);
        assert.deepEqual(body.data.map((s: { session_id: string }) => s.session_id), [
          "s3",
          "s2",
          "s1",
        ]);
      }
      const only = await server.getJson(`/v1/sessions?team=,${actorB.actorId},`, org.apiKey);
      assert.deepEqual(only.body.data.map((s: { session_id: string }) => s.session_id), ["s2"]);
      const blanks = await server.getJson(`/v1/sessions?team=,%20,`, org.apiKey);
      assert.equal(blanks.body.data.length, 3, "a team of blanks only is no team filter");
    });
    await t.step("agent", async () => {
      const hit = await server.getJson("/v1/sessions?agent=claude-code", org.apiKey);
      assert.equal(hit.body.data.length, 3);
      const miss = await server.getJson("/v1/sessions?agent=claude", org.apiKey);
      assert.deepEqual(miss.body, { data: [] });
    });
    await t.step("domain: sessions that reached it, figures from matching calls", async () => {
      const { body } = await server.getJson("/v1/sessions?domain=api.github.com", org.apiKey);
      assert.deepEqual(body.data.map((s: { session_id: string }) => s.session_id), ["s2"]);
      assert.equal(body.data[0].tool_call_count, 2);
      const both = await server.getJson(
        `/v1/sessions?domain=docs.example.com&after=${iso(T0 + 1500)}`,
        org.apiKey,
      );
      assert.equal(both.body.data[0].session_id, "s1");
      assert.equal(both.body.data[0].tool_call_count, 1);
    });
  },
);

engineTest(
  "GET /v1/sessions pages with cursors: every row once, stable while data arrives",
  async (t) => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const records = [];
    for (let i = 0; i < 23; i++) {
      // Pairs of sessions share a last_seen, so the tie-break by id is exercised.
      records.push(
        toolResult({
          session: `p${String(i).padStart(2, "0")}`,
          id: `t${i}`,
          tool: "Read",
          timeMs: T0 + Math.floor(i / 2) * 1000,
        }),
      );
    }
    const ingest = await server.ingest("/v1/logs", claudeExport(records), org.ingestKey);
    assert.equal(ingest.status, 200);
    await ingest.body?.cancel();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const path = `/v1/sessions?limit=5${cursor ? `&cursor=${cursor}` : ""}`;
      const { status, body } = await server.getJson(path, org.apiKey);
      assert.equal(status, 200, JSON.stringify(body));
      seen.push(...body.data.map((s: { session_id: string }) => s.session_id));
      cursor = body.next_cursor;
      if (pages === 1) {
        // New telemetry arriving mid-walk, newer than everything: must not shift later pages.
        const late = await server.ingest(
          "/v1/logs",
          claudeExport([
            toolResult({ session: "late", id: "late", tool: "Read", timeMs: T0 + 99_000 }),
          ]),
          org.ingestKey,
        );
        await late.body?.cancel();
      }
      pages++;
    } while (cursor);
    assert.equal(pages, 5);
    assert.equal(seen.length, 23);
    assert.equal(new Set(seen).size, 23, "no session repeats");
    await t.step("a cursor sent with other filters is refused", async () => {
      const first = await server.getJson("/v1/sessions?limit=2", org.apiKey);
      const other = await server.getJson(
        `/v1/sessions?limit=2&agent=claude-code&cursor=${first.body.next_cursor}`,
        org.apiKey,
      );
      assert.equal(other.status, 400);
      assert.match(other.body.error.message, /^invalid cursor/);
      const resized = await server.getJson(
        `/v1/sessions?limit=3&cursor=${first.body.next_cursor}`,
        org.apiKey,
      );
      assert.equal(resized.status, 200, "the page size may change between pages");
    });
    await t.step("filtered walk also returns every row once", async () => {
      const ids: string[] = [];
      let next: string | undefined;
      do {
        const { body } = await server.getJson(
          `/v1/sessions?limit=4&agent=claude-code${next ? `&cursor=${next}` : ""}`,
          org.apiKey,
        );
        ids.push(...body.data.map((s: { session_id: string }) => s.session_id));
        next = body.next_cursor;
      } while (next);
      assert.equal(ids.length, 24);
      assert.equal(new Set(ids).size, 24);
    });
  },
);

engineTest(
  "GET /v1/sessions/{id} returns the whole session with calls, flags and domains",
  async (t) => {
    await using server = await startTestServer();
    const { org } = await loadScenario(server);
    const other = await loadScenario(server, "Other");
    await t.step("detail", async () => {
      const { status, body } = await server.getJson("/v1/sessions/s2", org.apiKey);
      assert.equal(status, 200);
      assert.deepEqual(Object.keys(body), [
        "session",
        "tool_calls",
        "risk_flags",
        "external_domains",
        "child_sessions",
        "model_calls",
      ]);
      assert.deepEqual(body.child_sessions, []);
      assert.equal(body.session.session_id, "s2");
      assert.equal(body.session.tool_call_count, 2);
      assert.equal(body.tool_calls.length, 2);
      const [rejected, ok] = body.tool_calls;
      assert.deepEqual(Object.keys(rejected).sort(), [
        "category",
        "decision",
        "decision_source",
        "duration_ms",
        "id",
        "outcome",
        "success",
        "timestamp",
        "tool_name",
        "tool_type",
      ]);
      assert.equal(rejected.outcome, "rejected");
      assert.equal(rejected.duration_ms, null);
      assert.equal(rejected.success, null);
      assert.equal(rejected.decision, "reject");
      assert.equal(rejected.timestamp, iso(T0 + 10_000));
      assert.equal(ok.outcome, "ok");
      assert.equal(ok.success, true);
      assert.equal(ok.category, "code_exec");
      assert.deepEqual(body.external_domains, [{
        domain: "api.github.com",
        scheme: "https",
        hits: 1,
      }]);
      const flags = body.risk_flags.map((f: { flag: string }) => f.flag);
      assert.ok(flags.includes("destructive_operation"), JSON.stringify(body.risk_flags));
      const flag = body.risk_flags.find((f: { flag: string }) =>
        f.flag === "destructive_operation"
      );
      assert.equal(flag.tool_call_id, "toolu_5");
      assert.equal(flag.tool_name, "Bash");
      assert.equal(flag.timestamp, iso(T0 + 11_000));
    });
    await t.step("empty lists are []", async () => {
      const { body } = await server.getJson("/v1/sessions/s3", org.apiKey);
      assert.deepEqual(body.risk_flags, []);
    });
    await t.step("unknown and other organization's sessions are 404", async () => {
      const missing = await server.getJson("/v1/sessions/nope", org.apiKey);
      assert.deepEqual(missing, {
        status: 404,
        body: { error: { code: "not_found", message: "session not found" } },
      });
      // Both organizations have an "s1"; each sees only its own.
      const mine = await server.getJson("/v1/sessions/s1", org.apiKey);
      const theirs = await server.getJson("/v1/sessions/s1", other.org.apiKey);
      assert.equal(mine.body.session.actor_id, org.actorId);
      assert.equal(theirs.body.session.actor_id, other.org.actorId);
    });
    await t.step("ids with reserved characters are percent-decoded", async () => {
      const missing = await server.getJson("/v1/sessions/a%2Fb", org.apiKey);
      assert.equal(missing.status, 404);
      assert.equal(missing.body.error.message, "session not found");
    });
  },
);

engineTest("GET /v1/sessions/facets lists domains and agents alphabetically", async () => {
  await using server = await startTestServer();
  const { org } = await loadScenario(server);
  const { status, body } = await server.getJson("/v1/sessions/facets", org.apiKey);
  assert.equal(status, 200);
  assert.deepEqual(body, {
    domains: ["api.github.com", "docs.example.com", "github.com"],
    agents: ["claude-code"],
    repositories: [],
  });
  const empty = await server.createOrg("Empty");
  assert.deepEqual((await server.getJson("/v1/sessions/facets", empty.apiKey)).body, {
    domains: [],
    agents: [],
    repositories: [],
  });
});

engineTest(
  "GET /v1/sessions?after= alone (read through the session index) equals the grouped read",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const now = new Date();
    for (const batch of generateExports({ actors: 3, days: 6, seed: 11, now })) {
      const response = await server.ingest("/v1/logs", batch.body, org.ingestKey);
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    // `before` far in the future selects nothing away but takes the grouped path.
    const future = "9999-12-31T00:00:00Z";
    const whole = await walkSessions(server, org.apiKey, "") as SessionRow[];
    const began = new Map(whole.map((session) => [session.session_id, session.first_seen]));
    let [inside, straddling] = [0, 0];
    // Days back, and bounds just after a session's first call (it straddles them).
    const spanning = whole.filter((session) => session.first_seen < session.last_seen);
    const bounds = [
      ...[1, 2.5, 5].map((days) => now.getTime() - days * 86_400_000),
      ...spanning.slice(-3).map((session) => Date.parse(session.first_seen) + 1),
    ];
    for (const bound of bounds) {
      const after = iso(bound);
      const recent = await walkSessions(server, org.apiKey, `after=${after}`) as SessionRow[];
      const grouped = await walkSessions(server, org.apiKey, `after=${after}&before=${future}`);
      assert.ok(recent.length > 5, `${recent.length} sessions since ${after}`);
      assert.deepEqual(recent, grouped);
      const before = recent.filter((session) => began.get(session.session_id)! < after).length;
      straddling += before;
      inside += recent.length - before;
    }
    // Both kinds of a page were read: sessions that began inside the window
    // (their stored row answers) and sessions that straddle its bound.
    assert.ok(inside > 0 && straddling > 0, `${inside} inside, ${straddling} straddling`);
  },
);

interface SessionRow {
  "session_id": string;
  "first_seen": string;
  "last_seen": string;
}

/** Every session of a filtered walk, three per page. */
async function walkSessions(server: TestServer, key: string, filters: string) {
  const sessions: unknown[] = [];
  let cursor = "";
  for (;;) {
    const { status, body } = await server.getJson(
      `/v1/sessions?${filters}&limit=3${cursor ? `&cursor=${cursor}` : ""}`,
      key,
    );
    assert.equal(status, 200, JSON.stringify(body));
    sessions.push(...body.data);
    if (!body.next_cursor) return sessions;
    cursor = body.next_cursor;
  }
}

engineTest(
  "a session's calls of one millisecond are listed in the order they were reported",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    // Gemini CLI logs a batch of parallel calls at one time and with no call id.
    const tools = Array.from({ length: 12 }, (_, i) => `tool_${String(i).padStart(2, "0")}`);
    const response = await server.ingest(
      "/v1/logs",
      claudeExport(
        tools.map((tool) => toolResult({ session: "burst", id: tool, tool, timeMs: T0 })),
      ),
      org.ingestKey,
    );
    assert.equal(response.status, 200, await response.text());
    const { body } = await server.getJson("/v1/sessions/burst", org.apiKey);
    assert.deepEqual(body.tool_calls.map((c: { tool_name: string }) => c.tool_name), tools);
  },
);
