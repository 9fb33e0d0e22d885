/**
 * The per-organization series of `/metrics` (issue #34): model cost, risk
 * flags by kind and tool-call errors count what each export committed, once
 * (a retried export, a call's span after its log or its log after its span,
 * a result after its reject add nothing twice), never what was refused; and
 * each organization's last accepted export is a timestamp.
 */
import assert from "node:assert/strict";
import { createTestOrg, engineTest, startTestServer, type TestServer } from "./_harness.ts";
import { apiRequest, claudeEvent, claudeExport, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

const SESSION = "org-metrics";
const TOKEN = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
const nano = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });

/**
 * Claude Code's logs: a destructive command, a read of an SSH key, a command
 * holding a token, a failed command, and two model calls ($0.25 and $0.50).
 */
const logs = claudeExport([
  toolResult({
    session: SESSION,
    id: "toolu_rm",
    tool: "Bash",
    timeMs: T0,
    input: { command: "rm -rf /srv/app" },
  }),
  toolResult({
    session: SESSION,
    id: "toolu_key",
    tool: "Read",
    timeMs: T0 + 1000,
    input: { file_path: "/home/dev/.ssh/id_rsa" },
  }),
  toolResult({
    session: SESSION,
    id: "toolu_token",
    tool: "Bash",
    timeMs: T0 + 2000,
    input: { command: `curl -H 'Authorization: token ${TOKEN}' https://api.github.com` },
  }),
  toolResult({
    session: SESSION,
    id: "toolu_fail",
    tool: "Bash",
    timeMs: T0 + 3000,
    success: false,
    error: "Exit code 1",
    input: { command: "make test" },
  }),
  apiRequest({
    session: SESSION,
    timeMs: T0 + 4000,
    model: "claude-sonnet-4-5",
    costUsd: 0.25,
    requestId: "req_1",
  }),
  apiRequest({
    session: SESSION,
    timeMs: T0 + 5000,
    model: "claude-sonnet-4-5",
    costUsd: 0.5,
    requestId: "req_2",
  }),
]);

/** Claude Code's beta spans of the same calls: no arguments, no cost; the failed one failed. */
const spans = {
  resourceSpans: [{
    resource: { attributes: [attr("service.name", "claude-code")] },
    scopeSpans: [{
      scope: { name: "com.anthropic.claude_code.tracing" },
      spans: [
        ...["toolu_rm", "toolu_key", "toolu_token", "toolu_fail"].map((id, i) => ({
          traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
          spanId: `00f067aa0ba902b${i}`,
          name: "claude_code.tool",
          kind: 1,
          startTimeUnixNano: nano(T0 + i * 1000),
          endTimeUnixNano: nano(T0 + i * 1000 + 5),
          attributes: [
            attr("gen_ai.operation.name", "execute_tool"),
            attr("session.id", SESSION),
            attr("gen_ai.tool.name", i === 1 ? "Read" : "Bash"),
            attr("gen_ai.tool.call.id", id),
          ],
          // The failed command's span says so: its row is an error before its log arrives.
          status: id === "toolu_fail" ? { code: 2 } : {},
        })),
        {
          traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
          spanId: "00f067aa0ba902c1",
          name: "claude_code.llm_request",
          kind: 1,
          startTimeUnixNano: nano(T0 + 4000),
          endTimeUnixNano: nano(T0 + 4900),
          attributes: [
            attr("session.id", SESSION),
            attr("gen_ai.operation.name", "chat"),
            attr("model", "claude-sonnet-4-5"),
            attr("request_id", "req_1"),
            { key: "input_tokens", value: { intValue: "100" } },
            { key: "output_tokens", value: { intValue: "50" } },
          ],
          status: {},
        },
      ],
    }],
  }],
};

/** What `logs` and `spans` store, whichever arrives first and however often. */
const STORED = {
  cost: 0.75,
  errors: 1,
  flags: { credential_detected: 1, destructive_operation: 1, sensitive_path: 1 },
};

/** The sample of `name` with exactly `labels` in a scrape, or undefined when absent. */
export function sample(
  text: string,
  name: string,
  labels: Record<string, string>,
): number | undefined {
  const key = Object.keys(labels).sort().map((k) => `${k}="${labels[k]}"`).join(",");
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${key}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

async function scrape(server: TestServer): Promise<string> {
  const response = await fetch(`${server.ingestUrl}/metrics`);
  assert.equal(response.status, 200);
  return await response.text();
}

/** The organization's counters in a scrape. */
function countersOf(text: string, org: string) {
  const flag = (kind: string) => sample(text, "agent_telemetry_risk_flags_total", { org, kind });
  return {
    cost: sample(text, "agent_telemetry_model_cost_usd_total", { org }),
    errors: sample(text, "agent_telemetry_tool_call_errors_total", { org }),
    flags: {
      credential_detected: flag("credential_detected"),
      destructive_operation: flag("destructive_operation"),
      sensitive_path: flag("sensitive_path"),
    },
  };
}

async function send(server: TestServer, path: string, body: unknown, key: string) {
  const response = await server.ingest(path, body, key);
  assert.equal(response.status, 200, await response.text());
}

for (const order of ["logs first", "spans first"] as const) {
  engineTest(
    `/metrics counts an organization's stored cost, risk flags and errors once, retries included (${order})`,
    async () => {
      await using server = await startTestServer();
      const org = await server.createOrg("Acme");
      const other = await server.createOrg("Globex");
      const sends: [string, unknown][] = [["/v1/logs", logs], ["/v1/traces", spans]];
      if (order === "spans first") sends.reverse();
      const before = Date.now() / 1000;
      for (const [path, body] of sends) await send(server, path, body, org.ingestKey);
      const after = Date.now() / 1000;
      let text = await scrape(server);
      assert.deepEqual(countersOf(text, org.orgId), STORED);
      const last = sample(text, "agent_telemetry_last_export_timestamp_seconds", {
        org: org.orgId,
      });
      assert.ok(last !== undefined && last >= before && last <= after, `last export ${last}`);
      // Nothing of the other organization's yet: its series start with its first export.
      assert.equal(text.includes(other.orgId), false);

      // Both exports again (an exporter retrying after a lost answer): nothing counted twice.
      for (const [path, body] of sends) await send(server, path, body, org.ingestKey);
      text = await scrape(server);
      assert.deepEqual(countersOf(text, org.orgId), STORED);

      // Another organization's export counts under its own id only.
      await send(server, "/v1/logs", logs, other.ingestKey);
      text = await scrape(server);
      assert.deepEqual(countersOf(text, other.orgId), STORED);
      assert.deepEqual(countersOf(text, org.orgId), STORED);
    },
  );
}

engineTest("a result after its reject adds no risk flag again, its error once", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const input = JSON.stringify({ command: "rm -rf /srv/app" });
  const reject = claudeExport([
    claudeEvent("tool_decision", T0, {
      "session.id": SESSION,
      "tool_name": "Bash",
      "tool_use_id": "toolu_rejected",
      "decision": "reject",
      "source": "user_reject",
      "tool_input": input,
    }),
  ]);
  await send(server, "/v1/logs", reject, org.ingestKey);
  let counters = countersOf(await scrape(server), org.orgId);
  assert.equal(counters.flags.destructive_operation, 1, "the reject's arguments are flagged");
  assert.equal(counters.errors, 0);
  const result = claudeExport([
    toolResult({
      session: SESSION,
      id: "toolu_rejected",
      tool: "Bash",
      timeMs: T0 + 10,
      success: false,
      error: "The user doesn't want to proceed with this tool use.",
      input: JSON.parse(input),
    }),
  ]);
  for (let i = 0; i < 2; i++) await send(server, "/v1/logs", result, org.ingestKey);
  counters = countersOf(await scrape(server), org.orgId);
  assert.equal(counters.flags.destructive_operation, 1, "the result replaces the reject's row");
  assert.equal(counters.errors, 1);
  const detail = (await server.getJson(`/v1/sessions/${SESSION}`, org.apiKey)).body;
  assert.deepEqual(detail.risk_flags.map((f: { flag: string }) => f.flag), [
    "destructive_operation",
  ]);
});

Deno.test("an export the store refuses counts nothing; organizations known at start show zeros", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-test-" });
  try {
    const org = await createTestOrg(dir, "Acme");
    await using server = await startTestServer({ dir });
    // Known at start: every counter at zero, so that Prometheus sees the first increase.
    let text = await scrape(server);
    assert.deepEqual(countersOf(text, org.orgId), {
      cost: 0,
      errors: 0,
      flags: { credential_detected: 0, destructive_operation: 0, sensitive_path: 0 },
    });
    assert.equal(
      sample(text, "agent_telemetry_last_export_timestamp_seconds", { org: org.orgId }),
      undefined,
      "no export accepted yet",
    );
    const { DatabaseSync } = await import("node:sqlite");
    const blocker = new DatabaseSync(`${server.dir}/telemetry.db`);
    try {
      blocker.exec("BEGIN EXCLUSIVE");
      const refused = await server.ingest("/v1/logs", logs, org.ingestKey);
      assert.equal(refused.status, 503, await refused.text());
      blocker.exec("ROLLBACK");
    } finally {
      blocker.close();
    }
    text = await scrape(server);
    assert.deepEqual(countersOf(text, org.orgId).cost, 0, "a refused export's cost");
    assert.deepEqual(countersOf(text, org.orgId).flags.destructive_operation, 0);
    assert.equal(countersOf(text, org.orgId).errors, 0);
    assert.equal(
      sample(text, "agent_telemetry_last_export_timestamp_seconds", { org: org.orgId }),
      undefined,
      "a refused export is no accepted export",
    );
    // The exporter's retry is stored and counted.
    await send(server, "/v1/logs", logs, org.ingestKey);
    assert.deepEqual(countersOf(await scrape(server), org.orgId), STORED);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("/metrics shows --max-disk-bytes, and nothing of it without a cap", async () => {
  {
    await using server = await startTestServer({ flags: { maxDiskBytes: "1000000000" } });
    assert.match(await scrape(server), /^agent_telemetry_max_disk_bytes 1000000000$/m);
  }
  await using server = await startTestServer();
  assert.doesNotMatch(await scrape(server), /agent_telemetry_max_disk_bytes/);
});
