/**
 * `GET /v1/unmapped-events` (issue #28): what an organization's agents sent
 * that stored nothing, by agent, version, event name and reason, from a real
 * recorded run (Claude Code 2.1.332 with an MCP server, a subagent and a
 * hook, whose hook, plugin, MCP-connection and subagent events we do not
 * map), per organization and actor, on both engines.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readRecording, REAL_FIXTURES } from "../scripts/agents/_fixtures.ts";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { claudeEvent } from "./_otlp.ts";

type Row = {
  agent: string;
  "agent_version": string;
  "event_name": string;
  reason: string;
  records: number;
  "first_seen": string;
  "last_seen": string;
};

async function replayLogs(server: TestServer, org: TestOrg) {
  const dir = join(REAL_FIXTURES, "claude-code-mcp-2.1.332", "http-json");
  for (const request of await readRecording(dir)) {
    const response = await fetch(server.ingestUrl + request.path, {
      method: "POST",
      headers: { "content-type": request.contentType, authorization: `Bearer ${org.ingestKey}` },
      body: request.body as Uint8Array<ArrayBuffer>,
    });
    assert.equal(response.status, 200, await response.text());
  }
}

async function unmapped(server: TestServer, org: TestOrg, query = ""): Promise<Row[]> {
  const { status, body } = await server.getJson(`/v1/unmapped-events${query}`, org.apiKey);
  assert.equal(status, 200, JSON.stringify(body));
  return body.data;
}

engineTest("unmapped events are counted per organization, agent, version and actor", async () => {
  await using server = await startTestServer();
  const a = await server.createOrg("A");
  const b = await server.createOrg("B");
  const keys = await server.keyStore();
  const other = await keys.createActor(a.orgId, "other-tool");
  await keys.close();
  const before = Date.now();
  await replayLogs(server, a);

  const rows = await unmapped(server, a);
  const names = rows.map((r) => `${r.agent} ${r.agent_version} ${r.reason} ${r.event_name}`);
  for (
    const name of [
      "claude-code 2.1.332 unmapped_event hook_execution_start",
      "claude-code 2.1.332 unmapped_event subagent_completed",
      "claude-code 2.1.332 unmapped_event mcp_server_connection",
      // Named in the spec and not kept on purpose: apart from the drift above.
      "claude-code 2.1.332 not_kept user_prompt",
      "claude-code 2.1.332 not_kept plugin_loaded",
    ]
  ) {
    assert.ok(names.includes(name), `${name} in ${JSON.stringify(names)}`);
  }
  const hooks = rows.find((r) => r.event_name === "hook_execution_start")!;
  assert.equal(hooks.records, 3, "one per PreToolUse hook run");
  assert.ok(Date.parse(hooks.first_seen) >= before - 1000);
  assert.ok(Date.parse(hooks.last_seen) >= Date.parse(hooks.first_seen));
  // Mapped events are no drift.
  assert.ok(!names.some((n) => n.endsWith("tool_result")), JSON.stringify(names));

  // Another sender of the same organization: an unknown service's log.
  const response = await server.ingest("/v1/logs", {
    resourceLogs: [{
      resource: {
        attributes: [
          { key: "service.name", value: { stringValue: "acme-agent" } },
          { key: "service.version", value: { stringValue: "9.9.9" } },
        ],
      },
      scopeLogs: [{
        scope: { name: "acme" },
        logRecords: [claudeEvent("acme.step", Date.now(), { "session.id": "x" })],
      }],
    }],
  }, other.ingest_key);
  assert.equal(response.status, 200, await response.text());
  const theirs = await unmapped(server, a, `?actor=${other.actor_id}`);
  assert.deepEqual(
    theirs.map((r) => [r.agent, r.reason, r.event_name, r.records]),
    [["other", "unknown_agent", "acme.step", 1]],
  );
  assert.equal((await unmapped(server, a)).length, rows.length + 1);

  // A retried export counts again: these are records received, not stored rows.
  await replayLogs(server, a);
  const again = (await unmapped(server, a)).find((r) => r.event_name === "hook_execution_start")!;
  assert.equal(again.records, 6);

  // Nothing of A's shows to B.
  assert.deepEqual(await unmapped(server, b), []);
  const anonymous = await server.get("/v1/unmapped-events");
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
});

engineTest(
  "an organization keeps at most 1,000 unmapped-event rows; existing ones still count",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const exportOf = (names: string[]) => ({
      resourceLogs: [{
        resource: { attributes: [{ key: "service.name", value: { stringValue: "acme-agent" } }] },
        scopeLogs: [{
          scope: { name: "acme" },
          logRecords: names.map((name) => claudeEvent(name, Date.now(), { "session.id": "x" })),
        }],
      }],
    });
    const names = Array.from(
      { length: 1001 },
      (_, i) => `acme.event_${String(i).padStart(4, "0")}`,
    );
    for (const body of [exportOf(names.slice(0, 999)), exportOf(names.slice(999))]) {
      const response = await server.ingest("/v1/logs", body, org.ingestKey);
      assert.equal(response.status, 200, await response.text());
    }
    let rows = await unmapped(server, org);
    assert.equal(rows.length, 1000, "the 1,001st key is not added");
    assert.ok(
      !rows.some((r) => r.event_name === names[1000]),
    );
    // A key already stored still counts once the bound is reached.
    const again = await server.ingest("/v1/logs", exportOf([names[0]!]), org.ingestKey);
    assert.equal(again.status, 200, await again.text());
    rows = await unmapped(server, org);
    assert.equal(rows.find((r) => r.event_name === names[0])!.records, 2);
  },
);

engineTest("unmapped events age out with retention", async () => {
  await using server = await startTestServer({ flags: { retentionDays: "90" } });
  const org = await server.createOrg();
  const response = await server.ingest("/v1/logs", {
    resourceLogs: [{
      resource: { attributes: [{ key: "service.name", value: { stringValue: "acme-agent" } }] },
      scopeLogs: [{
        scope: { name: "acme" },
        logRecords: [claudeEvent("acme.step", Date.now(), { "session.id": "x" })],
      }],
    }],
  }, org.ingestKey);
  assert.equal(response.status, 200, await response.text());
  const DAY = 86_400_000;
  await server.server.runRetention(Date.now() + 89 * DAY);
  assert.equal((await unmapped(server, org)).length, 1, "seen within the retention period");
  await server.server.runRetention(Date.now() + 91 * DAY);
  assert.deepEqual(await unmapped(server, org), [], "not seen for longer than it");
});
