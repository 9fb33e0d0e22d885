import assert from "node:assert/strict";
import { engineTest, startTestServer } from "./_harness.ts";
import { apiRequest, claudeExport, toolDecision, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

const SESSION = "merge-session";
const nano = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** Claude Code's logs of three calls: a failed curl, a rejected `rm -rf`, a read. */
const logs = claudeExport([
  toolResult({
    session: SESSION,
    id: "toolu_curl",
    tool: "Bash",
    timeMs: T0,
    success: false,
    error: "Exit code 6",
    input: { command: "curl -fsS https://api.example.com/v1/status" },
  }),
  toolDecision({
    session: SESSION,
    id: "toolu_rm",
    tool: "Bash",
    timeMs: T0 + 1000,
    decision: "reject",
  }),
  toolResult({ session: SESSION, id: "toolu_read", tool: "Read", timeMs: T0 + 2000 }),
  apiRequest({
    session: SESSION,
    timeMs: T0 + 3000,
    model: "claude-sonnet-4-5",
    costUsd: 0.25,
    requestId: "req_merge_1",
  }),
]);

/** Its beta `claude_code.tool` spans of the same calls: they know no outcome but ok. */
function toolSpan(callId: string, timeMs: number, n: number) {
  return {
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: `00f067aa0ba902b${n}`,
    name: "claude_code.tool",
    kind: 1,
    startTimeUnixNano: nano(timeMs),
    endTimeUnixNano: nano(timeMs + 5),
    attributes: [
      attr("gen_ai.operation.name", "execute_tool"),
      attr("gen_ai.conversation.id", SESSION),
      attr("session.id", SESSION),
      attr("gen_ai.tool.name", "Bash"),
      attr("gen_ai.tool.call.id", callId),
    ],
    status: {},
  };
}
/**
 * Its `claude_code.llm_request` span of the same request as the `api_request`
 * log: since 2.1.332 with `gen_ai.operation.name` `chat`, usage and no cost.
 */
const llmSpan = {
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "00f067aa0ba902c1",
  name: "claude_code.llm_request",
  kind: 1,
  startTimeUnixNano: nano(T0 + 3000),
  endTimeUnixNano: nano(T0 + 3900),
  attributes: [
    attr("session.id", SESSION),
    attr("gen_ai.conversation.id", SESSION),
    attr("gen_ai.operation.name", "chat"),
    attr("model", "claude-sonnet-4-5"),
    attr("gen_ai.request.model", "claude-sonnet-4-5"),
    attr("request_id", "req_merge_1"),
    { key: "input_tokens", value: { intValue: "100" } },
    { key: "output_tokens", value: { intValue: "50" } },
    { key: "cache_read_tokens", value: { intValue: "10" } },
    { key: "cache_creation_tokens", value: { intValue: "5" } },
    { key: "gen_ai.usage.input_tokens", value: { intValue: "115" } },
    { key: "gen_ai.usage.output_tokens", value: { intValue: "50" } },
  ],
  status: {},
};
/** A subagent's tool span: the parent's `session.id`, the subagent's own conversation id. */
const subagentSpan = {
  ...toolSpan("toolu_sub_ls", T0 + 4000, 4),
  attributes: [
    attr("gen_ai.operation.name", "execute_tool"),
    attr("gen_ai.conversation.id", "subagent-a1b2"),
    attr("session.id", SESSION),
    attr("tool_name", "Bash"),
    attr("gen_ai.tool.name", "Bash"),
    attr("tool_use_id", "toolu_sub_ls"),
  ],
};
const spans = {
  resourceSpans: [{
    resource: { attributes: [attr("service.name", "claude-code")] },
    scopeSpans: [{
      scope: { name: "com.anthropic.claude_code.tracing" },
      spans: [
        toolSpan("toolu_curl", T0, 1),
        toolSpan("toolu_rm", T0 + 1000, 2),
        toolSpan("toolu_read", T0 + 2000, 3),
        llmSpan,
        subagentSpan,
      ],
    }],
  }],
};

for (const order of ["logs first", "spans first"] as const) {
  engineTest(
    `a call's log and span merge into one row whatever arrives first (${order})`,
    async () => {
      await using server = await startTestServer();
      const org = await server.createOrg();
      const sends: [string, unknown][] = [["/v1/logs", logs], ["/v1/traces", spans]];
      if (order === "spans first") sends.reverse();
      for (const [path, body] of sends) {
        const response = await server.ingest(path, body, org.ingestKey);
        assert.equal(response.status, 200);
        await response.body?.cancel();
      }
      const { body: detail } = await server.getJson(`/v1/sessions/${SESSION}`, org.apiKey);
      assert.deepEqual(
        detail.tool_calls.map((c: Record<string, unknown>) => [c.outcome, c.decision ?? null]),
        [["error", "accept"], ["rejected", "reject"], ["ok", "accept"], ["ok", null]],
      );
      // The subagent's span is a call of the parent's session, not a session of its own.
      const sessions = (await server.getJson("/v1/sessions", org.apiKey)).body.data;
      assert.deepEqual(sessions.map((s: { session_id: string }) => s.session_id), [SESSION]);
      assert.equal(detail.session.tool_call_count, 4);
      assert.equal(detail.session.error_count, 1);
      assert.equal(detail.session.success_count, 2);
      // One model call from the log and the span of one request: the log's cost, tokens once.
      assert.equal(detail.session.cost_usd, 0.25);
      // Spans first, the span's call was estimated until the log's cost replaced the
      // estimate: the session keeps none of it, on its page and in its detail.
      for (const session of [detail.session, sessions[0]]) {
        assert.deepEqual([session.cost_source, session.estimated_cost_usd], ["reported", 0]);
      }
      const cost = (await server.getJson("/v1/insights/cost?window=7d", org.apiKey)).body;
      assert.deepEqual(
        cost.breakdown.map((row: Record<string, unknown>) => [
          row.call_count,
          row.input_tokens,
          row.output_tokens,
          row.cost_usd,
        ]),
        [[1, 100, 50, 0.25]],
      );
      assert.deepEqual(detail.risk_flags.map((f: Record<string, unknown>) => f.flag), []);
      assert.deepEqual(
        detail.external_domains.map((d: Record<string, unknown>) => d.domain),
        ["api.example.com"],
      );
      const calls = detail.tool_calls as { id: string }[];
      const curl = (await server.getJson(`/v1/tool-calls/${calls[0]!.id}`, org.apiKey)).body;
      assert.equal(curl.error_message, "Exit code 6");
      assert.match(curl.arguments, /api\.example\.com/);
      assert.equal(curl.source, "otlp_logs");
      assert.equal(curl.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
      assert.equal(curl.span_id, "00f067aa0ba902b1");
      const rm = (await server.getJson(`/v1/tool-calls/${calls[1]!.id}`, org.apiKey)).body;
      assert.equal(rm.success, null);
      assert.equal(rm.span_id, "00f067aa0ba902b2");
      const activity = await server.getJson("/v1/insights/activity?window=7d", org.apiKey);
      assert.equal(activity.body.summary.total_calls, 4);
      assert.equal(activity.body.summary.error_count, 1);
    },
  );
}
