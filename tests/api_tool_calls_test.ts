import assert from "node:assert/strict";
import { engineTest, startTestServer } from "./_harness.ts";
import { loadScenario, T0 } from "./_scenario.ts";

const iso = (ms: number) => new Date(ms).toISOString();
const ids = (body: { data: { tool_name: string }[] }) => body.data.map((c) => c.tool_name);

engineTest("GET /v1/tool-calls lists calls newest first in the list form", async () => {
  await using server = await startTestServer();
  const { org } = await loadScenario(server);
  const { status, body } = await server.getJson("/v1/tool-calls", org.apiKey);
  assert.equal(status, 200);
  assert.deepEqual(ids(body), [
    "mcp__github__create_issue",
    "Bash",
    "Edit",
    "WebFetch",
    "Read",
    "Bash",
  ]);
  const read = body.data[4];
  assert.deepEqual(read, {
    id: read.id,
    timestamp: iso(T0 + 1000),
    session_id: "s1",
    actor_id: org.actorId,
    actor_name: "dev",
    tool_name: "Read",
    tool_type: "builtin",
    category: "file_read",
    duration_ms: 10,
    success: false,
    outcome: "error",
    error_message: "ENOENT: no such file",
    decision: "accept",
    decision_source: "config",
    agent_system: "claude-code",
    dimensions: {},
  });
  const mcp = body.data[0];
  assert.equal(mcp.tool_type, "mcp");
  assert.equal(mcp.category, "mcp");
  const rejected = body.data[2];
  assert.equal(rejected.outcome, "rejected");
  assert.equal(rejected.duration_ms, null);
  assert.equal(rejected.success, null);
  assert.equal("error_message" in rejected, false, "empty optional fields are left out");
});

engineTest("GET /v1/tool-calls applies every filter", async (t) => {
  await using server = await startTestServer();
  const { org, actorB } = await loadScenario(server);
  const cases: [string, string[]][] = [
    ["session_id=s1", ["WebFetch", "Read", "Bash"]],
    [`actor=${actorB.actorId}`, ["Bash", "Edit"]],
    [`team=${actorB.actorId},nobody`, ["Bash", "Edit"]],
    ["tool_name=Bash", ["Bash", "Bash"]],
    ["tool_type=mcp", ["mcp__github__create_issue"]],
    ["category=file_read", ["Read"]],
    ["outcome=rejected", ["Edit"]],
    ["outcome=Error", ["Read"]],
    ["outcome=ok&tool_name=Bash&session_id=s2", ["Bash"]],
    [`after=${iso(T0 + 1000)}&before=${iso(T0 + 10_000)}`, ["Edit", "WebFetch", "Read"]],
    // T0 + 1 s written in +05:00: the bound is the instant, not its digits.
    [`after=${encodeURIComponent(iso(T0 + 1000 + 5 * 3_600_000).replace(".000Z", "+05:00"))}`, [
      "mcp__github__create_issue",
      "Bash",
      "Edit",
      "WebFetch",
      "Read",
    ]],
    ["tool_name=Nope", []],
  ];
  for (const [query, expected] of cases) {
    await t.step(query, async () => {
      const { status, body } = await server.getJson(`/v1/tool-calls?${query}`, org.apiKey);
      assert.equal(status, 200, JSON.stringify(body));
      assert.deepEqual(ids(body), expected);
    });
  }
});

engineTest("GET /v1/tool-calls pages every call exactly once", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const { claudeExport, toolResult } = await import("./_otlp.ts");
  const records = Array.from(
    { length: 37 },
    (_, i) =>
      toolResult({
        session: `s${i % 3}`,
        id: `t${i}`,
        tool: "Grep",
        timeMs: T0 + Math.floor(i / 4),
      }),
  );
  const response = await server.ingest("/v1/logs", claudeExport(records), org.ingestKey);
  await response.body?.cancel();
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const { body } = await server.getJson(
      `/v1/tool-calls?limit=6&tool_name=Grep${cursor ? `&cursor=${cursor}` : ""}`,
      org.apiKey,
    );
    seen.push(...body.data.map((c: { id: string }) => c.id));
    cursor = body.next_cursor;
  } while (cursor);
  assert.equal(seen.length, 37);
  assert.equal(new Set(seen).size, 37);
});

engineTest("GET /v1/tool-calls/{id} returns the detail object", async (t) => {
  await using server = await startTestServer();
  const { org } = await loadScenario(server);
  const other = await server.createOrg("Other");
  const list = await server.getJson("/v1/tool-calls", org.apiKey);
  const byName = (name: string) =>
    list.body.data.find((c: { tool_name: string }) => c.tool_name === name);
  await t.step("an ok call", async () => {
    const { status, body } = await server.getJson(
      `/v1/tool-calls/${byName("WebFetch").id}`,
      org.apiKey,
    );
    assert.equal(status, 200);
    assert.equal(body.tool_name, "WebFetch");
    assert.equal(body.category, "web_fetch");
    assert.equal(body.duration_ms, 300);
    assert.equal(body.success, true);
    assert.equal(body.result_size_bytes, null);
    assert.equal(body.tool_call_id, "toolu_3");
    assert.equal(body.tool_use_id, "toolu_3");
    assert.equal(body.source, "otlp_logs");
    assert.equal(body.agent_version, "2.1.240");
    assert.equal(body.prompt_id, "prompt-1");
    assert.equal(body.os_type, "linux");
    assert.equal(body.host_arch, "amd64");
    assert.equal(body.terminal_type, "vscode");
    assert.equal(typeof body.arguments, "string", "arguments is a JSON-encoded string");
    assert.deepEqual(JSON.parse(body.arguments), {
      url: "https://docs.example.com/guide",
      prompt: "summarize",
    });
    for (const [key, value] of Object.entries(body)) {
      assert.ok(value !== "" && value !== undefined, `empty optional field ${key}`);
    }
  });
  await t.step("a rejected call has null duration, success and result size", async () => {
    const { body } = await server.getJson(`/v1/tool-calls/${byName("Edit").id}`, org.apiKey);
    assert.equal(body.outcome, "rejected");
    assert.equal(body.duration_ms, null);
    assert.equal(body.success, null);
    assert.equal(body.result_size_bytes, null);
    for (const key of ["id", "timestamp", "session_id", "agent_system", "tool_name", "tool_type"]) {
      assert.ok(key in body, key);
    }
  });
  await t.step("an MCP call", async () => {
    const { body } = await server.getJson(
      `/v1/tool-calls/${byName("mcp__github__create_issue").id}`,
      org.apiKey,
    );
    assert.equal(body.tool_type, "mcp");
    assert.equal(body.mcp_server_scope, "user");
  });
  await t.step("unknown id and another organization's id are 404", async () => {
    const expected = {
      status: 404,
      body: { error: { code: "not_found", message: "tool call not found" } },
    };
    assert.deepEqual(await server.getJson("/v1/tool-calls/tc_nope", org.apiKey), expected);
    assert.deepEqual(
      await server.getJson(`/v1/tool-calls/${byName("Edit").id}`, other.apiKey),
      expected,
    );
  });
});

engineTest(
  "GET /v1/tool-calls/facets lists names, types and categories alphabetically",
  async () => {
    await using server = await startTestServer();
    const { org } = await loadScenario(server);
    const other = await server.createOrg("Other");
    const { status, body } = await server.getJson("/v1/tool-calls/facets", org.apiKey);
    assert.equal(status, 200);
    assert.deepEqual(body, {
      tool_names: ["Bash", "Edit", "Read", "WebFetch", "mcp__github__create_issue"],
      tool_types: ["builtin", "mcp"],
      categories: ["code_exec", "file_read", "file_write", "mcp", "web_fetch"],
    });
    const empty = await server.getJson("/v1/tool-calls/facets", other.apiKey);
    assert.deepEqual(empty.body, { tool_names: [], tool_types: [], categories: [] });
    const list = await server.getJson("/v1/tool-calls", other.apiKey);
    assert.deepEqual(list.body, { data: [] }, "another organization sees none of this one's data");
    const sessions = await server.getJson("/v1/sessions", other.apiKey);
    assert.deepEqual(sessions.body, { data: [] });
  },
);
