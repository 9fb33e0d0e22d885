/**
 * Each agent's fixture payload through the real ingest listener, with every
 * mapped field asserted through the query API.
 */
import assert from "node:assert/strict";
import { fixtureClock } from "./_scenario.ts";
import { engineTest, startTestServer, type TestServer } from "./_harness.ts";

type Call = Record<string, unknown>;

async function ingestFixture(server: TestServer, key: string, name: string, path = "/v1/logs") {
  const body = JSON.parse(
    await Deno.readTextFile(new URL(`./fixtures/agents/${name}`, import.meta.url)),
  );
  const response = await server.ingest(path, body, key);
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text);
}

async function callsOf(server: TestServer, key: string, session: string): Promise<Call[]> {
  const { body } = await server.getJson(`/v1/sessions/${session}`, key);
  const details = [];
  for (const call of body.tool_calls as Call[]) {
    details.push((await server.getJson(`/v1/tool-calls/${call.id}`, key)).body);
  }
  return details;
}

engineTest("Claude Code events map to tool calls, rejected calls and session cost", async () => {
  await using server = await startTestServer({ overrides: { clock: fixtureClock() } });
  const org = await server.createOrg();
  await ingestFixture(server, org.ingestKey, "claude_code.json");
  const session = "5e3a1c9b-7d2f-4f6a-9b1e-2c8d4a6f0e11";
  const detail = (await server.getJson(`/v1/sessions/${session}`, org.apiKey)).body;
  assert.equal(detail.session.agent_system, "claude-code");
  assert.equal(detail.session.agent_version, "2.1.240");
  assert.equal(detail.session.cost_usd, 0.0183);
  assert.equal(detail.session.tool_call_count, 5);
  assert.equal(detail.session.error_count, 1);
  assert.equal(detail.session.success_count, 3);
  const calls = await callsOf(server, org.apiKey, session);
  const [bash, read, mcp, rejected, fetch] = calls as Call[];
  assert.equal(bash!.tool_name, "Bash");
  assert.equal(bash!.outcome, "ok");
  assert.equal(bash!.category, "code_exec");
  assert.equal(bash!.duration_ms, 1187);
  assert.equal(bash!.result_size_bytes, 2048);
  assert.equal(bash!.decision, "accept");
  assert.equal(bash!.decision_source, "config");
  assert.equal(bash!.tool_call_id, "toolu_01HbQ7c2VxYp3mKt8WnR4sLd");
  assert.equal(bash!.tool_use_id, "toolu_01HbQ7c2VxYp3mKt8WnR4sLd");
  assert.equal(bash!.os_type, "linux");
  assert.equal(bash!.host_arch, "amd64");
  assert.equal(typeof bash!.arguments, "string");
  assert.equal(read!.outcome, "error");
  assert.equal(read!.success, false);
  assert.equal(read!.error_message, "File does not exist.");
  assert.equal(read!.error_type, "Error:ENOENT");
  assert.equal(mcp!.tool_type, "mcp");
  assert.equal(mcp!.category, "mcp");
  assert.equal(mcp!.mcp_server_name, "github");
  assert.equal(mcp!.mcp_server_scope, "user");
  assert.equal(rejected!.outcome, "rejected");
  assert.equal(rejected!.duration_ms, null);
  assert.equal(rejected!.success, null);
  assert.equal(rejected!.result_size_bytes, null);
  assert.equal(rejected!.decision, "reject");
  assert.equal(rejected!.decision_source, "user_reject");
  assert.match(String(rejected!.arguments), /rm -rf build/);
  assert.equal(fetch!.category, "web_fetch");
  assert.equal(fetch!.source, "otlp_logs");
  const flags = detail.risk_flags.map((f: { flag: string }) => f.flag);
  assert.ok(flags.includes("destructive_operation"), "a rejected rm -rf is still flagged");
  assert.ok(detail.external_domains.length >= 1, "the WebFetch URL is an external domain");
  const cost = (await server.getJson("/v1/insights/cost?window=30d", org.apiKey)).body;
  assert.equal(cost.breakdown[0].provider_name, "anthropic");
  assert.equal(cost.breakdown[0].model, "claude-sonnet-4-5-20250929");
  assert.equal(cost.summary.input_tokens, 12);
  assert.equal(cost.summary.cache_read_tokens, 18234);
  assert.equal(cost.summary.cache_creation_tokens, 1204);
  assert.equal(cost.summary.cost_available, true);
});

engineTest("Claude Code's old attribute names map the same way", async () => {
  await using server = await startTestServer({ overrides: { clock: fixtureClock() } });
  const org = await server.createOrg();
  await ingestFixture(server, org.ingestKey, "claude_code_old_names.json");
  const { body } = await server.getJson("/v1/sessions", org.apiKey);
  assert.equal(body.data.length, 2);
  const withDetails = body.data.find((s: { session_id: string }) =>
    s.session_id.startsWith("d41f0c6e")
  );
  assert.equal(withDetails.cost_usd, 0.0421);
  const calls = await callsOf(server, org.apiKey, withDetails.session_id);
  const bash = calls.find((c) => c.tool_name === "Bash")!;
  assert.equal(bash.duration_ms, 2034);
  assert.equal(bash.result_size_bytes, 187);
  assert.equal(bash.decision, "accept");
  assert.equal(bash.decision_source, "user_temporary");
  assert.equal(bash.terminal_type, "iTerm.app");
  assert.equal(bash.os_type, "darwin");
  const write = calls.find((c) => c.tool_name === "Write")!;
  assert.equal(write.outcome, "rejected");
  assert.equal(write.category, "file_write");
  const other = body.data.find((s: { session_id: string }) => s.session_id.startsWith("9a7e3b51"));
  const redacted = await callsOf(server, org.apiKey, other.session_id);
  const mcp = redacted.find((c) => c.tool_name === "mcp_tool")!;
  assert.equal(mcp.tool_type, "mcp");
  assert.equal(mcp.outcome, "error");
  assert.equal(mcp.mcp_server_scope, "project");
  assert.equal(mcp.error_type, "McpError");
  const grep = redacted.find((c) => c.tool_name === "Grep")!;
  assert.equal("arguments" in grep, false, "no arguments when tool details are off");
});

engineTest("Codex events map with call ids, outputs and denied decisions", async () => {
  await using server = await startTestServer({ overrides: { clock: fixtureClock() } });
  const org = await server.createOrg();
  await ingestFixture(server, org.ingestKey, "codex.json");
  const session = "0199a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b";
  const detail = (await server.getJson(`/v1/sessions/${session}`, org.apiKey)).body;
  assert.equal(detail.session.agent_system, "codex_cli_rs");
  assert.equal(detail.session.model, "gpt-5-codex", "Codex reports the model on tool calls");
  assert.equal(detail.session.cost_usd, 0, "Codex reports no cost");
  const calls = await callsOf(server, org.apiKey, session);
  const ok = calls.find((c) => c.tool_call_id === "call_Q7vXh2LpR9tYk4Wm3NcB8sDf")!;
  assert.equal(ok.outcome, "ok");
  assert.equal(ok.category, "code_exec");
  assert.equal(ok.decision, "approved");
  assert.equal(typeof ok.result, "string");
  assert.equal(ok.result_size_bytes, new TextEncoder().encode(String(ok.result)).length);
  assert.equal(ok.model, "gpt-5-codex");
  const failed = calls.find((c) => c.outcome === "error")!;
  assert.equal(typeof failed.error_message, "string");
  const mcp = calls.find((c) => c.tool_type === "mcp")!;
  assert.equal(mcp.mcp_server_name, "github");
  const denied = calls.find((c) => c.outcome === "rejected")!;
  assert.equal(denied.decision, "denied");
  assert.equal(denied.duration_ms, null);
  assert.equal(denied.model, "gpt-5-codex", "a denial keeps the model of its tool_decision");
  const cost = (await server.getJson("/v1/insights/cost?window=30d", org.apiKey)).body;
  assert.deepEqual(cost.breakdown, [{
    provider_name: "openai",
    model: "gpt-5-codex",
    input_tokens: 2342,
    output_tokens: 512,
    cost_usd: 0,
    // gpt-5-codex at $1.25 / $10 / $0.125 per million input / output / cache-read tokens.
    // 2342 × 1.25e-6 + 512 × 10e-6 + 16000 × 0.125e-6, rounded as every USD figure.
    estimated_cost_usd: 0.0100475,
    call_count: 1,
  }], "the provider comes from codex.conversation_starts; input excludes cached tokens");
  assert.equal(cost.summary.cache_read_tokens, 16000);
  assert.equal(cost.summary.cost_available, false);
});

engineTest("Gemini CLI tool calls map without call ids; rejects are rejected calls", async () => {
  await using server = await startTestServer({ overrides: { clock: fixtureClock() } });
  const org = await server.createOrg();
  await ingestFixture(server, org.ingestKey, "gemini_cli.json");
  const session = "8f2c6a1e-4b3d-4e9f-a7c5-1d0b2e3f4a6c";
  const detail = (await server.getJson(`/v1/sessions/${session}`, org.apiKey)).body;
  assert.equal(detail.session.agent_system, "gemini-cli");
  assert.equal(detail.session.agent_version, "", "service.version is Node's, not the agent's");
  assert.equal(detail.session.tool_call_count, 5);
  const calls = await callsOf(server, org.apiKey, session);
  const read = calls.find((c) => c.tool_name === "read_file")!;
  assert.equal(read.category, "file_read");
  assert.equal(read.result_size_bytes, 1834);
  assert.equal("tool_call_id" in read, false);
  assert.equal("tool_use_id" in read, false);
  const rejected = calls.find((c) => c.outcome === "rejected")!;
  assert.equal(rejected.tool_name, "run_shell_command");
  assert.equal(rejected.result_size_bytes, null);
  const mcp = calls.find((c) => c.tool_type === "mcp")!;
  assert.equal(mcp.mcp_server_name, "github");
  const flag = detail.risk_flags.find((f: { flag: string }) => f.flag === "destructive_operation");
  assert.equal(
    flag.tool_call_id,
    rejected.id,
    "without an agent call id, a flag names the call's id",
  );
});

engineTest("GenAI semantic-convention spans map to tool calls with trace ids", async () => {
  await using server = await startTestServer({ overrides: { clock: fixtureClock() } });
  const org = await server.createOrg();
  const answer = await ingestFixture(server, org.ingestKey, "genai_spans.json", "/v1/traces");
  assert.equal(
    Number(answer.partialSuccess.rejectedSpans),
    1,
    "the span without a conversation id",
  );
  const detail = (await server.getJson("/v1/sessions/conv_7f3e2d1c0b9a", org.apiKey)).body;
  assert.equal(detail.session.agent_system, "support-bot");
  const calls = await callsOf(server, org.apiKey, "conv_7f3e2d1c0b9a");
  const ok = calls.find((c) => c.tool_name === "get_order_status")!;
  assert.equal(ok.source, "otlp_traces");
  assert.equal(ok.duration_ms, 140);
  assert.match(String(ok.trace_id), /^[0-9a-f]{32}$/);
  assert.match(String(ok.span_id), /^[0-9a-f]{16}$/);
  assert.equal(typeof ok.tool_call_id, "string");
  assert.equal(typeof ok.result, "string");
  const failed = calls.find((c) => c.tool_name === "fetch_url")!;
  assert.equal(failed.outcome, "error");
  assert.equal(failed.error_type, "TimeoutError");
  assert.equal(failed.category, "web_fetch");
  const mcp = calls.find((c) => c.tool_type === "mcp")!;
  assert.equal(mcp.category, "mcp");
});
