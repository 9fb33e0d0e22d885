import assert from "node:assert/strict";
import { mapRecord } from "../src/ingest/agents/mod.ts";
import type {
  AttributeValue,
  DecisionEvent,
  MapResult,
  ModelCallEvent,
  OtlpRecord,
  SessionInfoEvent,
  TelemetryEvent,
  ToolCallEvent,
} from "../src/model/telemetry.ts";
import { fixtureRecords } from "./_otlp_json_records.ts";

// 2026-11-20T10:00:00.000Z, the fixtures' base time.
const BASE_MS = 1795168800000;
const HOUR = 3_600_000;

/** A log record with neutral defaults; `over` replaces fields. */
function logRecord(over: Partial<OtlpRecord>): OtlpRecord {
  return {
    signal: "logs",
    resource: { "service.name": "claude-code", "service.version": "2.1.240" },
    scopeName: "com.anthropic.claude_code.events",
    eventName: "tool_result",
    attributes: {},
    body: null,
    timeUnixNano: BigInt(BASE_MS) * 1_000_000n,
    observedTimeUnixNano: null,
    traceId: "",
    spanId: "",
    statusCode: null,
    statusMessage: "",
    index: 0,
    ...over,
  };
}

/** A GenAI span with neutral defaults; `over` replaces fields. */
function span(over: Partial<OtlpRecord>): OtlpRecord {
  return logRecord({
    signal: "traces",
    resource: { "service.name": "my-agent" },
    scopeName: "",
    eventName: "execute_tool t",
    timeUnixNano: BigInt(BASE_MS) * 1_000_000n,
    observedTimeUnixNano: BigInt(BASE_MS + 250) * 1_000_000n,
    traceId: "5b8efff798038103d269b633813fc60c",
    spanId: "a1b2c3d4e5f60718",
    statusCode: 0,
    ...over,
  });
}

/** The one event of a mapped result, checked to be of `kind`. */
function only<K extends TelemetryEvent["kind"]>(
  result: MapResult,
  kind: K,
): Extract<TelemetryEvent, { kind: K }> {
  assert.equal(result.status, "mapped", JSON.stringify(result));
  if (result.status !== "mapped") throw new Error("unreachable");
  assert.equal(result.events.length, 1);
  const event = result.events[0]!;
  assert.equal(event.kind, kind);
  return event as Extract<TelemetryEvent, { kind: K }>;
}

/** The event without its undefined (absent) optional fields, to compare whole. */
function defined<T extends object>(event: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [key, value] of Object.entries(event)) {
    if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  return out;
}

function ms(offset: number): number {
  return BASE_MS + offset;
}

function bytes(s: string): number {
  return new TextEncoder().encode(s).length;
}

// ---------------------------------------------------------------- Claude Code

const CLAUDE_SESSION = "5e3a1c9b-7d2f-4f6a-9b1e-2c8d4a6f0e11";
const CLAUDE_PROMPT_1 = "0b7c2d4e-1f3a-4b5c-8d9e-0a1b2c3d4e5f";
const CLAUDE_PROMPT_2 = "6c8d0e2f-3a4b-4c5d-9e0f-1a2b3c4d5e6f";
const claudeCommon = {
  sessionId: CLAUDE_SESSION,
  agentSystem: "claude-code",
  agentVersion: "2.1.240",
  source: "otlp_logs",
  osType: "linux",
  hostArch: "amd64",
  terminalType: "vscode",
} as const;

Deno.test("mapRecord maps the Claude Code fixture event by event", async (t) => {
  const records = await fixtureRecords("claude_code.json");
  const results = records.map(mapRecord);
  assert.deepEqual(results.map((r) => r.status), [
    "ignored",
    "mapped",
    "mapped",
    "mapped",
    "mapped",
    "mapped",
    "mapped",
    "ignored",
    "mapped",
    "mapped",
  ]);

  await t.step("api_request becomes an anthropic model call with its cost", () => {
    assert.deepEqual(
      only(results[1]!, "model_call"),
      {
        kind: "model_call",
        sessionId: CLAUDE_SESSION,
        timeMs: ms(2500),
        agentSystem: "claude-code",
        agentVersion: "2.1.240",
        identity: "request:req_011CVJw5T9m3Qx7bKpN2aLdE",
        providerName: "anthropic",
        model: "claude-sonnet-4-5-20250929",
        inputTokens: 12,
        outputTokens: 389,
        cacheReadTokens: 18234,
        cacheCreationTokens: 1204,
        costUsd: 0.0183,
        durationMs: 2481,
      } satisfies ModelCallEvent,
    );
  });

  await t.step("an accept decision pairs with its result by tool_use_id", () => {
    const decision = only(results[2]!, "decision");
    assert.deepEqual(
      defined(decision),
      {
        ...claudeCommon,
        kind: "decision",
        timeMs: ms(3000),
        identity: "call:toolu_01HbQ7c2VxYp3mKt8WnR4sLd",
        toolName: "Bash",
        toolType: "builtin",
        category: "code_exec",
        toolCallId: "toolu_01HbQ7c2VxYp3mKt8WnR4sLd",
        toolUseId: "toolu_01HbQ7c2VxYp3mKt8WnR4sLd",
        decision: "accept",
        decisionSource: "config",
        rejects: false,
        promptId: CLAUDE_PROMPT_1,
      } satisfies DecisionEvent,
    );
    assert.equal(only(results[3]!, "tool_call").identity, decision.identity);
  });

  await t.step("a successful Bash result takes tool_input, not tool_parameters", () => {
    assert.deepEqual(
      defined(only(results[3]!, "tool_call")),
      {
        ...claudeCommon,
        kind: "tool_call",
        timeMs: ms(4200),
        identity: "call:toolu_01HbQ7c2VxYp3mKt8WnR4sLd",
        toolName: "Bash",
        toolType: "builtin",
        category: "code_exec",
        outcome: "ok",
        durationMs: 1187,
        resultSizeBytes: 2048,
        toolCallId: "toolu_01HbQ7c2VxYp3mKt8WnR4sLd",
        toolUseId: "toolu_01HbQ7c2VxYp3mKt8WnR4sLd",
        arguments: '{"command":"npm test","description":"Run the test suite"}',
        decision: "accept",
        decisionSource: "config",
        promptId: CLAUDE_PROMPT_1,
      } satisfies ToolCallEvent,
    );
  });

  await t.step("a failed Read carries its error and error type", () => {
    const call = only(results[4]!, "tool_call");
    assert.equal(call.outcome, "error");
    assert.equal(call.errorMessage, "File does not exist.");
    assert.equal(call.errorType, "Error:ENOENT");
    assert.equal(call.durationMs, 3);
    assert.equal(call.resultSizeBytes, 0);
    assert.equal(call.category, "file_read");
    assert.equal(call.arguments, '{"file_path":"/home/dev/shop/src/missing.ts"}');
  });

  await t.step("an MCP tool is mcp with its server and scope", () => {
    const decision = only(results[5]!, "decision");
    assert.equal(decision.toolType, "mcp");
    assert.equal(decision.category, "mcp");
    assert.deepEqual(
      defined(only(results[6]!, "tool_call")),
      {
        ...claudeCommon,
        kind: "tool_call",
        timeMs: ms(7400),
        identity: "call:toolu_01Pq9s4TzUv6wXy1AbCd8EfG",
        toolName: "mcp__github__create_issue",
        toolType: "mcp",
        category: "mcp",
        outcome: "ok",
        durationMs: 1342,
        resultSizeBytes: 512,
        toolCallId: "toolu_01Pq9s4TzUv6wXy1AbCd8EfG",
        toolUseId: "toolu_01Pq9s4TzUv6wXy1AbCd8EfG",
        arguments: '{"owner":"acme","repo":"shop","title":"Flaky checkout test"}',
        decision: "accept",
        decisionSource: "user_temporary",
        promptId: CLAUDE_PROMPT_1,
        mcpServerName: "github",
        mcpServerScope: "user",
      } satisfies ToolCallEvent,
    );
  });

  await t.step("a reject decision with no result is a rejecting decision", () => {
    const decision = only(results[8]!, "decision");
    assert.equal(decision.rejects, true);
    assert.equal(decision.decision, "reject");
    assert.equal(decision.decisionSource, "user_reject");
    assert.equal(decision.promptId, CLAUDE_PROMPT_2);
    assert.equal(decision.identity, "call:toolu_01Rs2t5UvWx8yZa3BcDe6FgH");
    assert.equal(
      decision.arguments,
      '{"bash_command":"rm","full_command":"rm -rf build","description":"Remove the build output"}',
    );
  });

  await t.step("WebFetch is a web fetch", () => {
    const call = only(results[9]!, "tool_call");
    assert.equal(call.category, "web_fetch");
    assert.equal(call.decisionSource, "user_permanent");
  });
});

Deno.test("mapRecord reads Claude Code's old attribute names and string values", async (t) => {
  const records = await fixtureRecords("claude_code_old_names.json");
  const results = records.map(mapRecord);
  assert.ok(results.every((r) => r.status === "mapped"));

  await t.step("tool_result takes decision/source and tool_parameters", () => {
    assert.deepEqual(
      defined(only(results[1]!, "tool_call")),
      {
        kind: "tool_call",
        sessionId: "d41f0c6e-2b8a-4e57-9c13-7a5e8f2b1d90",
        timeMs: ms(HOUR + 2100),
        agentSystem: "claude-code",
        agentVersion: "2.0.14",
        identity: "call:toolu_01Vw5x8YzAb1cD6eFgH9iJkL",
        toolName: "Bash",
        toolType: "builtin",
        category: "code_exec",
        outcome: "ok",
        durationMs: 2034,
        resultSizeBytes: 187,
        toolCallId: "toolu_01Vw5x8YzAb1cD6eFgH9iJkL",
        toolUseId: "toolu_01Vw5x8YzAb1cD6eFgH9iJkL",
        arguments:
          '{"bash_command":"git","full_command":"git push --force origin main","description":"Force-push the rebased branch"}',
        decision: "accept",
        decisionSource: "user_temporary",
        source: "otlp_logs",
        osType: "darwin",
        hostArch: "arm64",
        terminalType: "iTerm.app",
      } satisfies ToolCallEvent,
    );
  });

  await t.step("a user_abort reject rejects", () => {
    const decision = only(results[2]!, "decision");
    assert.equal(decision.rejects, true);
    assert.equal(decision.decisionSource, "user_abort");
    assert.equal(decision.category, "file_write");
  });

  await t.step("string token counts and cost are numbers", () => {
    const call = only(results[3]!, "model_call");
    assert.equal(call.costUsd, 0.0421);
    assert.equal(call.inputTokens, 1520);
    assert.equal(call.outputTokens, 610);
    assert.equal(call.cacheCreationTokens, 2048);
    assert.equal(call.durationMs, 5120);
  });

  await t.step("the redacted mcp_tool with a scope is an MCP call with no server name", () => {
    const call = only(results[4]!, "tool_call");
    assert.equal(call.toolName, "mcp_tool");
    assert.equal(call.toolType, "mcp");
    assert.equal(call.category, "mcp");
    assert.equal(call.mcpServerScope, "project");
    assert.equal(call.mcpServerName, undefined);
    assert.equal(call.outcome, "error");
    assert.equal(call.errorType, "McpError");
    assert.equal(call.errorMessage, "MCP error -32001: Request timed out");
    assert.equal(call.durationMs, 30012);
    assert.equal(call.sessionId, "9a7e3b51-c06d-4f28-b4e9-1d2c3f4a5b6c");
  });

  await t.step("a call without tool details has no arguments", () => {
    const call = only(results[5]!, "tool_call");
    assert.equal(call.arguments, undefined);
    assert.equal(call.category, "file_read");
  });

  await t.step("an api_request without cost_usd has a null cost", () => {
    assert.equal(only(results[6]!, "model_call").costUsd, null);
  });
});

Deno.test("Claude Code tool_result coerces strings, numbers and booleans alike", () => {
  const base = { "session.id": "s", "tool_name": "Read", "tool_use_id": "toolu_1" };
  for (
    const [success, duration, outcome] of [
      ["true", "42", "ok"],
      [true, 42, "ok"],
      ["false", "42.4", "error"],
      [false, 42, "error"],
      ["TRUE", " 42 ", "ok"],
    ] as const
  ) {
    const call = only(
      mapRecord(logRecord({ attributes: { ...base, success, "duration_ms": duration } })),
      "tool_call",
    );
    assert.equal(call.outcome, outcome, `success=${JSON.stringify(success)}`);
    assert.equal(call.durationMs, 42);
  }
  const noDuration = only(mapRecord(logRecord({ attributes: base })), "tool_call");
  assert.equal(noDuration.durationMs, null);
  assert.equal(noDuration.resultSizeBytes, null);
  assert.equal(noDuration.outcome, "ok");
});

Deno.test("Claude Code tool_result prefers decision_type/decision_source to decision/source", () => {
  const call = only(
    mapRecord(logRecord({
      attributes: {
        "session.id": "s",
        "tool_name": "Edit",
        "decision_type": "accept",
        "decision_source": "hook",
        decision: "old",
        source: "old",
      },
    })),
    "tool_call",
  );
  assert.equal(call.decision, "accept");
  assert.equal(call.decisionSource, "hook");
});

Deno.test("Claude Code arguments: JSON text kept, other text and objects encoded", () => {
  const args = (attributes: Record<string, unknown>) =>
    only(
      mapRecord(logRecord({
        attributes: { "session.id": "s", "tool_name": "Bash", ...attributes } as OtlpRecord[
          "attributes"
        ],
      })),
      "tool_call",
    ).arguments;
  assert.equal(args({ "tool_input": '{"command":"ls"}' }), '{"command":"ls"}');
  assert.equal(args({ "tool_input": ' ["a", 1] ' }), ' ["a", 1] ');
  assert.equal(args({ "tool_input": "ls -la" }), '"ls -la"');
  assert.equal(args({ "tool_input": "{not json" }), '"{not json"');
  assert.equal(args({ "tool_input": { command: "ls" } }), '{"command":"ls"}');
  assert.equal(args({ "tool_parameters": '{"full_command":"ls"}' }), '{"full_command":"ls"}');
  assert.equal(args({ "tool_input": '{"a":1}', "tool_parameters": '{"b":2}' }), '{"a":1}');
  assert.equal(args({ "tool_input": "", "tool_parameters": '{"b":2}' }), '{"b":2}');
  assert.equal(args({}), undefined);
});

Deno.test("Claude Code MCP detection: tool_source, scope, names and server name", () => {
  const call = (attributes: Record<string, string>) =>
    only(
      mapRecord(logRecord({ attributes: { "session.id": "s", "tool_name": "x", ...attributes } })),
      "tool_call",
    );
  assert.equal(call({ "tool_source": "mcp" }).toolType, "mcp");
  assert.equal(call({ "tool_source": "sdk_host_builtin_mcp" }).toolType, "mcp");
  assert.equal(call({ "tool_source": "builtin" }).toolType, "builtin");
  assert.equal(call({ "mcp_server_scope": "local" }).toolType, "mcp");
  assert.equal(call({ "tool_name": "mcp_tool" }).category, "mcp");
  const named = call({ "tool_name": "mcp__linear_app__create_issue" });
  assert.equal(named.toolType, "mcp");
  assert.equal(named.mcpServerName, "linear_app");
  assert.equal(
    call({ "tool_name": "mcp__x__y", "mcp_server_name": "direct" }).mcpServerName,
    "direct",
  );
  assert.equal(
    call({ "tool_name": "mcp__x__y", "tool_parameters": '{"mcp_server_name":"params"}' })
      .mcpServerName,
    "params",
  );
  assert.equal(call({ "tool_name": "Bash" }).mcpServerName, undefined);
});

Deno.test("Claude Code api_request: absent cost is null, micros are used when cost_usd is not", () => {
  const model = (attributes: Record<string, string | number>) =>
    only(
      mapRecord(logRecord({
        eventName: "claude_code.api_request",
        attributes: { "session.id": "s", model: "m", ...attributes },
      })),
      "model_call",
    );
  assert.equal(model({}).costUsd, null);
  assert.equal(model({ "cost_usd": 0 }).costUsd, 0);
  assert.equal(model({ "cost_usd": "0" }).costUsd, 0);
  assert.equal(model({ "cost_usd_micros": 18300 }).costUsd, 0.0183);
  const empty = model({});
  assert.deepEqual(
    [empty.inputTokens, empty.outputTokens, empty.cacheReadTokens, empty.cacheCreationTokens],
    [0, 0, 0, 0],
  );
  assert.equal(empty.durationMs, null);
});

Deno.test("Claude Code event names are accepted with and without the claude_code. prefix", () => {
  for (const eventName of ["tool_result", "claude_code.tool_result"]) {
    const result = mapRecord(
      logRecord({ eventName, attributes: { "session.id": "s", "tool_name": "Read" } }),
    );
    assert.equal(only(result, "tool_call").toolName, "Read");
  }
});

Deno.test("Claude Code events other than tool_result, tool_decision and api_request are ignored", () => {
  for (
    const [eventName, known] of [
      // Named in the spec's notKept: not kept on purpose.
      ["user_prompt", true],
      ["assistant_response", true],
      ["claude_code.plugin_loaded", true],
      // Not named: drift to show (docs/api.md §4.17).
      ["claude_code.api_error", false],
      ["mcp_server_connection", false],
      ["", false],
    ] as const
  ) {
    // Ignored even without a session id: they are not counted as unusable.
    assert.deepEqual(
      mapRecord(logRecord({ eventName, attributes: {} })),
      known ? { status: "ignored", known: true } : { status: "ignored" },
      eventName,
    );
  }
});

Deno.test("Claude Code agent_version is app.version, else service.version", () => {
  const attributes = { "session.id": "s", "tool_name": "Read" };
  assert.equal(only(mapRecord(logRecord({ attributes })), "tool_call").agentVersion, "2.1.240");
  assert.equal(
    only(
      mapRecord(logRecord({ attributes: { ...attributes, "app.version": "2.1.241" } })),
      "tool_call",
    )
      .agentVersion,
    "2.1.241",
  );
  assert.equal(
    only(
      mapRecord(logRecord({ resource: { "service.name": "claude-code" }, attributes })),
      "tool_call",
    )
      .agentVersion,
    "",
  );
});

Deno.test("Claude Code decisions: reject words reject, accepts do not", () => {
  const decide = (decision: string) =>
    only(
      mapRecord(logRecord({
        eventName: "tool_decision",
        attributes: { "session.id": "s", "tool_name": "Bash", "tool_use_id": "toolu_1", decision },
      })),
      "decision",
    ).rejects;
  for (const word of ["reject", "Reject", "deny", "denied", "abort", "user_abort"]) {
    assert.equal(decide(word), true, word);
  }
  for (const word of ["accept", "approved", "approved_for_session", "auto_accept", "modify"]) {
    assert.equal(decide(word), false, word);
  }
});

Deno.test("A Claude Code reject without tool_use_id is a rejected call; an accept is ignored", () => {
  const attributes = { "session.id": "s", "tool_name": "Write", "event.sequence": 7 };
  const rejected = only(
    mapRecord(logRecord({
      eventName: "tool_decision",
      attributes: { ...attributes, decision: "reject", source: "user_reject" },
    })),
    "tool_call",
  );
  assert.equal(rejected.outcome, "rejected");
  assert.equal(rejected.durationMs, null);
  assert.equal(rejected.resultSizeBytes, null);
  assert.equal(rejected.toolCallId, undefined);
  assert.equal(rejected.decision, "reject");
  assert.equal(rejected.decisionSource, "user_reject");
  assert.equal(rejected.identity, `claude_code.tool_decision:${BASE_MS}000000:Write:#7`);
  assert.deepEqual(
    mapRecord(
      logRecord({ eventName: "tool_decision", attributes: { ...attributes, decision: "accept" } }),
    ),
    { status: "ignored", known: true },
  );
});

// ---------------------------------------------------------------------- Codex

const CODEX_CONVERSATION = "0199a2b3-c4d5-7e6f-8a9b-0c1d2e3f4a5b";

Deno.test("mapRecord maps the Codex fixture event by event", async (t) => {
  const records = await fixtureRecords("codex.json");
  const results = records.map(mapRecord);
  assert.deepEqual(results.map((r) => r.status), [
    "mapped",
    "ignored",
    "ignored",
    "ignored",
    "mapped",
    "mapped",
    "mapped",
    "mapped",
    "mapped",
    "mapped",
  ]);
  const t0 = ms(2 * HOUR);

  await t.step("conversation_starts names the session's provider", () => {
    assert.deepEqual(
      only(results[0]!, "session_info"),
      {
        kind: "session_info",
        sessionId: CODEX_CONVERSATION,
        timeMs: t0,
        agentSystem: "codex_cli_rs",
        agentVersion: "0.98.0",
        identity: `codex.conversation_starts:${t0}000000`,
        providerName: "openai",
      } satisfies SessionInfoEvent,
    );
  });

  await t.step("response.completed is a model call with cached tokens taken out of input", () => {
    assert.deepEqual(
      only(results[4]!, "model_call"),
      {
        kind: "model_call",
        sessionId: CODEX_CONVERSATION,
        timeMs: t0 + 4200,
        agentSystem: "codex_cli_rs",
        agentVersion: "0.98.0",
        identity: `codex.sse_event:${t0 + 4200}000000:gpt-5-codex`,
        providerName: "",
        model: "gpt-5-codex",
        inputTokens: 18342 - 16000,
        outputTokens: 512,
        cacheReadTokens: 16000,
        cacheCreationTokens: 0,
        costUsd: null,
        durationMs: 3120,
      } satisfies ModelCallEvent,
    );
  });

  await t.step("an approval is a non-rejecting decision keyed by call_id", () => {
    const decision = only(results[5]!, "decision");
    assert.equal(decision.identity, "call:call_Q7vXh2LpR9tYk4Wm3NcB8sDf");
    assert.equal(decision.toolCallId, "call_Q7vXh2LpR9tYk4Wm3NcB8sDf");
    assert.equal(decision.toolUseId, undefined);
    assert.equal(decision.decision, "approved");
    assert.equal(decision.decisionSource, "config");
    assert.equal(decision.rejects, false);
  });

  await t.step("a successful tool_result carries output as result and its size", () => {
    const output =
      "running 12 tests\n............\ntest result: ok. 12 passed; 0 failed; 0 ignored";
    assert.deepEqual(
      defined(only(results[6]!, "tool_call")),
      {
        kind: "tool_call",
        sessionId: CODEX_CONVERSATION,
        timeMs: t0 + 8500,
        agentSystem: "codex_cli_rs",
        agentVersion: "0.98.0",
        identity: "call:call_Q7vXh2LpR9tYk4Wm3NcB8sDf",
        toolName: "shell",
        toolType: "builtin",
        category: "code_exec",
        outcome: "ok",
        durationMs: 4211,
        resultSizeBytes: bytes(output),
        toolCallId: "call_Q7vXh2LpR9tYk4Wm3NcB8sDf",
        arguments:
          '{"command":["bash","-lc","cargo test"],"workdir":"/home/dev/api","timeout_ms":120000}',
        result: output,
        model: "gpt-5-codex",
        source: "otlp_logs",
        terminalType: "ghostty/1.2.3",
      } satisfies ToolCallEvent,
    );
  });

  await t.step("a failed tool_result's error message is its output", () => {
    const call = only(results[7]!, "tool_call");
    assert.equal(call.outcome, "error");
    assert.equal(call.errorMessage, "curl: (6) Could not resolve host: api.github.com");
    assert.equal(call.result, call.errorMessage);
    assert.equal(call.durationMs, 87);
  });

  await t.step("a non-empty mcp_server makes an MCP call", () => {
    const call = only(results[8]!, "tool_call");
    assert.equal(call.toolType, "mcp");
    assert.equal(call.category, "mcp");
    assert.equal(call.mcpServerName, "github");
    assert.equal(call.mcpServerScope, undefined);
  });

  await t.step("denied rejects", () => {
    const decision = only(results[9]!, "decision");
    assert.equal(decision.rejects, true);
    assert.equal(decision.decision, "denied");
    assert.equal(decision.decisionSource, "user");
  });
});

Deno.test("Codex decisions: denied, abort and timed out reject; approvals do not", () => {
  const decide = (decision: string) =>
    only(
      mapRecord(logRecord({
        resource: { "service.name": "codex_exec" },
        eventName: "codex.tool_decision",
        attributes: { "conversation.id": "c", "tool_name": "shell", "call_id": "call_1", decision },
      })),
      "decision",
    ).rejects;
  for (const word of ["denied", "abort", "timed_out"]) assert.equal(decide(word), true, word);
  for (
    const word of ["approved", "approved_for_session", "approved_execpolicy_amendment"]
  ) assert.equal(decide(word), false, word);
});

Deno.test("Codex sse_event: input never below 0, no tokens ignored, ints accepted", () => {
  const sse = (attributes: Record<string, string | number>) =>
    mapRecord(logRecord({
      resource: { "service.name": "codex_tui" },
      eventName: "codex.sse_event",
      attributes: { "conversation.id": "c", ...attributes },
    }));
  const odd = only(
    sse({ "input_token_count": 10, "cached_token_count": 25, "output_token_count": 3 }),
    "model_call",
  );
  assert.equal(odd.inputTokens, 0);
  assert.equal(odd.cacheReadTokens, 25);
  assert.equal(odd.model, "");
  const noCache = only(sse({ "input_token_count": 100, "output_token_count": 7 }), "model_call");
  assert.deepEqual([noCache.inputTokens, noCache.cacheReadTokens, noCache.outputTokens], [
    100,
    0,
    7,
  ]);
  // output_token_count already includes reasoning tokens (OpenAI usage semantics).
  const reasoning = only(
    sse({ "input_token_count": 100, "output_token_count": 70, "reasoning_token_count": 50 }),
    "model_call",
  );
  assert.equal(reasoning.outputTokens, 70);
  assert.deepEqual(sse({ "event.kind": "response.output_item.done" }), {
    status: "ignored",
    known: true,
  });
});

Deno.test("Codex uses conversation.id, not session.id, as the session", () => {
  const result = mapRecord(logRecord({
    resource: { "service.name": "codex_cli_rs" },
    eventName: "codex.tool_result",
    attributes: { "session.id": "s", "tool_name": "shell", "call_id": "call_1" },
  }));
  assert.deepEqual(result, { status: "unusable", reason: "No session id" });
});

Deno.test("Codex conversation_starts without provider_name is ignored", () => {
  assert.deepEqual(
    mapRecord(logRecord({
      resource: { "service.name": "codex_cli_rs" },
      eventName: "codex.conversation_starts",
      attributes: { "conversation.id": "c" },
    })),
    { status: "ignored", known: true },
  );
});

/** A Codex 0.169.0 `codex.tool_result` as `codex exec` sends it; `attributes` adds or replaces. */
function codexResult(attributes: Record<string, string | number>): MapResult {
  return mapRecord(logRecord({
    resource: { "service.name": "codex_exec", "service.version": "0.169.0" },
    eventName: "codex.tool_result",
    attributes: {
      "event.name": "codex.tool_result",
      "conversation.id": "c",
      "tool_name": "exec_command",
      "call_id": "call_1",
      "duration_ms": "78",
      "success": "true",
      "model": "gpt-5.5",
      ...attributes,
    },
  }));
}

/** The header `exec_command` puts before a command's output (Codex 0.169.0). */
function execOutput(exitCode: number, output: string): string {
  return `Chunk ID: b8b6fc\nWall time: 0.0000 seconds\nProcess exited with code ${exitCode}\n` +
    `Original token count: 13\nOutput:\n${output}`;
}

Deno.test("Codex: a command its exec policy refused is rejected by config, not an error", () => {
  for (
    const reason of [
      "`/bin/bash -lc 'git push --force origin main'` rejected: Agents never push",
      "approval required by policy, but AskForApproval is set to Never",
    ]
  ) {
    const output = `exec_command failed: CreateProcess { message: "Rejected(${
      JSON.stringify(reason)
    })" }`;
    const call = only(codexResult({ success: "false", "duration_ms": "0", output }), "tool_call");
    assert.equal(call.outcome, "rejected", reason);
    assert.equal(call.decision, "reject");
    assert.equal(call.decisionSource, "config");
    assert.equal(call.durationMs, null);
    assert.equal(call.resultSizeBytes, null);
    assert.equal(call.errorMessage, undefined);
    assert.equal(call.model, "gpt-5.5");
  }
  // The same words printed by a command that ran and failed are its error, not a refusal.
  const printed = only(
    codexResult({
      success: "false",
      output: 'tool said: exec_command failed: CreateProcess { message: "Rejected(x)" }',
    }),
    "tool_call",
  );
  assert.equal(printed.outcome, "error");
  assert.equal(printed.decision, undefined);
});

Deno.test("Codex: a non-zero exit code in the output's header is an error even with success=true", () => {
  const curl = execOutput(6, "curl: (6) Could not resolve host: api.example.com\n");
  const failed = only(codexResult({ output: curl }), "tool_call");
  assert.equal(failed.outcome, "error");
  assert.equal(failed.errorMessage, curl);
  assert.equal(failed.durationMs, 78);
  const patch = only(
    codexResult({
      "tool_name": "apply_patch",
      output: "Exit code: 1\nWall time: 0 seconds\nOutput:\nverification failed\n",
    }),
    "tool_call",
  );
  assert.equal(patch.outcome, "error");
  const zero = only(codexResult({ output: execOutput(0, "hello\n") }), "tool_call");
  assert.equal(zero.outcome, "ok");
  assert.equal(zero.errorMessage, undefined);
  // Only the header counts: a command may print such a line itself.
  const printed = only(
    codexResult({ output: execOutput(0, "Process exited with code 3\nExit code: 2\n") }),
    "tool_call",
  );
  assert.equal(printed.outcome, "ok");
  const headerless = only(codexResult({ output: "Process exited with code 3\n" }), "tool_call");
  assert.equal(headerless.outcome, "ok");
});

Deno.test("Codex: apply_patch's raw patch text is stored as a JSON-encoded string", () => {
  const patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n";
  const call = only(
    codexResult({
      "tool_name": "apply_patch",
      arguments: patch,
      output: "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.\n",
    }),
    "tool_call",
  );
  assert.equal(call.arguments, JSON.stringify(patch));
  assert.equal(JSON.parse(call.arguments!), patch);
  assert.equal(call.category, "file_write");
});

Deno.test("Codex decisions and their sources are stored in the API's lower-case words", () => {
  const decide = (decision: string, source: string, callId?: string) =>
    mapRecord(logRecord({
      resource: { "service.name": "codex_exec" },
      eventName: "codex.tool_decision",
      attributes: {
        "event.name": "codex.tool_decision",
        "conversation.id": "c",
        "tool_name": "exec_command",
        ...(callId === undefined ? {} : { "call_id": callId }),
        "model": "gpt-5.5",
        decision,
        source,
      },
    }));
  const approved = only(decide("approved", "Config", "call_1"), "decision");
  assert.deepEqual([approved.decision, approved.decisionSource], ["approved", "config"]);
  const reviewed = only(decide("Denied", "AutomatedReviewer", "call_2"), "decision");
  assert.deepEqual(
    [reviewed.decision, reviewed.decisionSource, reviewed.rejects],
    ["denied", "automated_reviewer", true],
  );
  assert.equal(reviewed.model, "gpt-5.5", "a denial keeps the model it was made with");
  const alone = only(decide("abort", "User"), "tool_call");
  assert.deepEqual(
    [alone.outcome, alone.decision, alone.decisionSource, alone.model],
    ["rejected", "abort", "user", "gpt-5.5"],
  );
});

// ----------------------------------------------------------------- Gemini CLI

const GEMINI_SESSION = "8f2c6a1e-4b3d-4e9f-a7c5-1d0b2e3f4a6c";
const GEMINI_PROMPT = `${GEMINI_SESSION}########1`;

Deno.test("mapRecord maps the Gemini CLI fixture event by event", async (t) => {
  const records = await fixtureRecords("gemini_cli.json");
  const results = records.map(mapRecord);
  assert.deepEqual(results.map((r) => r.status), [
    "ignored",
    "ignored",
    "mapped",
    "mapped",
    "mapped",
    "mapped",
    "mapped",
    "mapped",
  ]);
  const t0 = ms(3 * HOUR);

  await t.step("api_response: cached out of input, thoughts into output, no provider", () => {
    assert.deepEqual(
      only(results[2]!, "model_call"),
      {
        kind: "model_call",
        sessionId: GEMINI_SESSION,
        timeMs: t0 + 2610,
        agentSystem: "gemini-cli",
        agentVersion: "",
        identity: `gemini_cli.api_response:${t0 + 2610}000000:gemini-2.5-pro`,
        providerName: "",
        model: "gemini-2.5-pro",
        inputTokens: 9120 - 6144,
        outputTokens: 214 + 380,
        cacheReadTokens: 6144,
        cacheCreationTokens: 0,
        costUsd: null,
        durationMs: 2310,
      } satisfies ModelCallEvent,
    );
  });

  await t.step("a tool_call has no call id and the Node version is not the agent version", () => {
    const call = only(results[3]!, "tool_call");
    const { identity, ...rest } = defined(call);
    assert.deepEqual(
      rest,
      {
        kind: "tool_call",
        sessionId: GEMINI_SESSION,
        timeMs: t0 + 3000,
        agentSystem: "gemini-cli",
        agentVersion: "",
        toolName: "read_file",
        toolType: "builtin",
        category: "file_read",
        outcome: "ok",
        durationMs: 12,
        resultSizeBytes: 1834,
        arguments: '{"absolute_path":"/home/dev/site/package.json"}',
        decision: "auto_accept",
        promptId: GEMINI_PROMPT,
        source: "otlp_logs",
      } satisfies Omit<ToolCallEvent, "identity">,
    );
    assert.ok(
      identity!.startsWith(`gemini_cli.tool_call:${t0 + 3000}000000:read_file:`),
      String(identity),
    );
    assert.ok(!("toolCallId" in defined(call)) && !("toolUseId" in defined(call)));
  });

  await t.step("a failed shell command carries error and error_type", () => {
    const call = only(results[4]!, "tool_call");
    assert.equal(call.outcome, "error");
    assert.equal(call.category, "code_exec");
    assert.equal(call.errorType, "shell_execute_error");
    assert.equal(
      call.errorMessage,
      "Command exited with code 1: error TS2307: Cannot find module './routes'",
    );
    assert.equal(call.durationMs, 5210);
  });

  await t.step("decision reject is a rejected call with null duration and size", () => {
    const call = only(results[5]!, "tool_call");
    assert.equal(call.outcome, "rejected");
    assert.equal(call.durationMs, null);
    assert.equal(call.resultSizeBytes, null);
    assert.equal(call.decision, "reject");
    assert.equal(call.errorMessage, undefined);
    assert.equal(call.arguments, '{"command":"git push --force origin main"}');
  });

  await t.step("tool_type mcp is an MCP call with its server", () => {
    const call = only(results[6]!, "tool_call");
    assert.equal(call.toolType, "mcp");
    assert.equal(call.category, "mcp");
    assert.equal(call.mcpServerName, "github");
  });

  await t.step("web_fetch is a web fetch", () => {
    assert.equal(only(results[7]!, "tool_call").category, "web_fetch");
  });
});

Deno.test("Gemini CLI agent_version comes from app.version only", () => {
  const call = (attributes: Record<string, string>) =>
    only(
      mapRecord(logRecord({
        resource: { "service.name": "gemini-cli", "service.version": "v22.19.0" },
        eventName: "gemini_cli.tool_call",
        attributes: { "session.id": "g", "function_name": "glob", ...attributes },
      })),
      "tool_call",
    );
  assert.equal(call({}).agentVersion, "");
  assert.equal(call({ "app.version": "0.21.0" }).agentVersion, "0.21.0");
});

Deno.test("Gemini CLI takes the session id from the resource when the event lacks it", () => {
  const call = only(
    mapRecord(logRecord({
      resource: { "service.name": "gemini-cli", "session.id": "from-resource" },
      eventName: "gemini_cli.tool_call",
      attributes: { "function_name": "glob" },
    })),
    "tool_call",
  );
  assert.equal(call.sessionId, "from-resource");
});

Deno.test("Gemini CLI tool calls of one tool at one instant get distinct identities", () => {
  const identity = (args: string) =>
    only(
      mapRecord(logRecord({
        resource: { "service.name": "gemini-cli" },
        eventName: "gemini_cli.tool_call",
        attributes: { "session.id": "g", "function_name": "read_file", "function_args": args },
      })),
      "tool_call",
    ).identity;
  assert.notEqual(identity('{"absolute_path":"/a"}'), identity('{"absolute_path":"/b"}'));
  assert.equal(identity('{"absolute_path":"/a"}'), identity('{"absolute_path":"/a"}'));
});

/** A `gemini_cli.tool_call` as Gemini CLI 0.61.0 sends it (`tests/fixtures/agents/real/`). */
function geminiToolCall(attributes: Record<string, AttributeValue>) {
  return mapRecord(logRecord({
    resource: { "service.name": "gemini-cli", "service.version": "v20.20.2" },
    scopeName: "gemini-cli",
    // The decoder resolves the name from the `event.name` attribute.
    eventName: "gemini_cli.tool_call",
    attributes: {
      "session.id": "g",
      "event.name": "gemini_cli.tool_call",
      "function_name": "run_shell_command",
      "duration_ms": 387,
      "success": true,
      "decision": "accept",
      "tool_type": "native",
      "content_length": 137,
      ...attributes,
    },
  }));
}

Deno.test("Gemini CLI: a call its policy denied (no decision, policy_violation) is rejected by config", () => {
  const call = only(
    geminiToolCall({
      "success": false,
      "decision": null,
      "duration_ms": 1,
      "content_length": 32,
      "error": "Tool execution denied by policy.",
      "error.message": "Tool execution denied by policy.",
      "error_type": "policy_violation",
      "error.type": "policy_violation",
      "function_args": '{\n  "command": "git push origin main"\n}',
    }),
    "tool_call",
  );
  assert.equal(call.outcome, "rejected");
  assert.equal(call.decision, "reject");
  assert.equal(call.decisionSource, "config");
  assert.equal(call.durationMs, null);
  assert.equal(call.resultSizeBytes, null);
  assert.equal(call.errorMessage, undefined);
  assert.equal(call.arguments, '{\n  "command": "git push origin main"\n}');
  // Another failure without a decision is still an error.
  const failed = only(
    geminiToolCall({
      "success": false,
      "decision": null,
      "error": "Command failed: boom",
      "error_type": "shell_execute_error",
    }),
    "tool_call",
  );
  assert.equal(failed.outcome, "error");
  assert.equal(failed.decisionSource, undefined);
  assert.equal(failed.errorType, "shell_execute_error");
});

Deno.test("Gemini CLI: a command whose metadata reports a non-zero exit is an error despite success", () => {
  const curl = only(
    geminiToolCall({ "metadata": '{\n  "exitCode": 6,\n  "isError": true\n}' }),
    "tool_call",
  );
  assert.equal(curl.outcome, "error");
  assert.equal(curl.errorMessage, "Command exited with code: 6");
  assert.equal(curl.durationMs, 387);
  assert.equal(curl.resultSizeBytes, 137);
  assert.equal(curl.decision, "accept");
  // Structured metadata (an OTLP kvlist) counts the same.
  assert.equal(
    only(geminiToolCall({ "metadata": { "exitCode": 2, "isError": true } }), "tool_call").outcome,
    "error",
  );
  // A write's diff statistics, an exit code 0 or metadata that is not JSON: ok.
  for (
    const metadata of [
      '{"model_added_lines":1,"model_removed_lines":0}',
      '{"exitCode":0}',
      "exitCode 6",
    ]
  ) {
    assert.equal(only(geminiToolCall({ metadata }), "tool_call").outcome, "ok", metadata);
  }
});

// ------------------------------------------------------------ GenAI semconv

Deno.test("mapRecord maps the GenAI semconv span fixture span by span", async (t) => {
  const records = await fixtureRecords("genai_spans.json");
  const results = records.map(mapRecord);
  assert.deepEqual(results.map((r) => r.status), [
    "ignored",
    "mapped",
    "mapped",
    "mapped",
    "mapped",
    "mapped",
    "ignored",
    "unusable",
  ]);
  const t0 = ms(4 * HOUR);

  await t.step("chat: semconv input includes cache reads, which are taken out", () => {
    assert.deepEqual(
      only(results[1]!, "model_call"),
      {
        kind: "model_call",
        sessionId: "conv_7f3e2d1c0b9a",
        timeMs: t0 + 100,
        agentSystem: "support-bot",
        agentVersion: "1.4.2",
        identity: "request:chatcmpl-CxA19bQ7rT2mVp",
        providerName: "openai",
        model: "gpt-4o",
        inputTokens: 1200 - 1024,
        outputTokens: 85,
        cacheReadTokens: 1024,
        cacheCreationTokens: 0,
        costUsd: null,
        durationMs: 1800,
      } satisfies ModelCallEvent,
    );
  });

  await t.step("execute_tool: call id, arguments, result, duration from the span", () => {
    const result = '{"status":"shipped","carrier":"UPS"}';
    assert.deepEqual(
      defined(only(results[2]!, "tool_call")),
      {
        kind: "tool_call",
        sessionId: "conv_7f3e2d1c0b9a",
        timeMs: t0 + 2000,
        agentSystem: "support-bot",
        agentVersion: "1.4.2",
        identity: "call:call_VSPygqKTWdrhaFErNvMV18Yl",
        toolName: "get_order_status",
        toolType: "builtin",
        category: "other",
        outcome: "ok",
        durationMs: 140,
        resultSizeBytes: bytes(result),
        toolCallId: "call_VSPygqKTWdrhaFErNvMV18Yl",
        arguments: '{"order_id":"A-1042"}',
        result,
        agentName: "Support Agent",
        toolDescription: "Look up the shipping status of an order",
        source: "otlp_traces",
        traceId: "5b8efff798038103d269b633813fc60c",
        spanId: "c3d4e5f607182930",
      } satisfies ToolCallEvent,
    );
  });

  await t.step("status ERROR: error type and status message; structured arguments encoded", () => {
    const call = only(results[3]!, "tool_call");
    assert.equal(call.outcome, "error");
    assert.equal(call.errorType, "TimeoutError");
    assert.equal(call.errorMessage, "Request timed out after 30s");
    assert.equal(call.toolCallId, "call_4HkT9wQz2XcV7bNm1LpR6sYd");
    assert.equal(call.arguments, '{"url":"https://status.example-carrier.com/track?id=1Z999"}');
    assert.equal(call.category, "web_fetch");
    assert.equal(call.durationMs, 30000);
    assert.equal(call.resultSizeBytes, null);
  });

  await t.step("an MCP tools/call span is an MCP call identified by its span", () => {
    const call = only(results[4]!, "tool_call");
    assert.equal(call.toolType, "mcp");
    assert.equal(call.category, "mcp");
    assert.equal(call.toolCallId, undefined);
    assert.equal(call.identity, "span:e5f60718293a4b5c");
  });

  await t.step("gen_ai.system stands in for gen_ai.provider.name", () => {
    const call = only(results[5]!, "model_call");
    assert.equal(call.providerName, "anthropic");
    assert.equal(call.inputTokens, 300);
    assert.equal(call.identity, "span:f60718293a4b5c6d");
  });

  await t.step("a span without gen_ai.conversation.id is unusable", () => {
    assert.deepEqual(results[7], { status: "unusable", reason: "No session id" });
  });
});

Deno.test("GenAI spans: deprecated token names, response model fallback, no operation", () => {
  const model = only(
    mapRecord(span({
      eventName: "chat",
      attributes: {
        "gen_ai.operation.name": "text_completion",
        "gen_ai.conversation.id": "c",
        "gen_ai.response.model": "mistral-large-2411",
        "gen_ai.usage.prompt_tokens": "50",
        "gen_ai.usage.completion_tokens": "9",
        "gen_ai.usage.cache_creation.input_tokens": 4,
      },
    })),
    "model_call",
  );
  assert.deepEqual(
    [
      model.model,
      model.inputTokens,
      model.outputTokens,
      model.cacheCreationTokens,
      model.providerName,
    ],
    ["mistral-large-2411", 50, 9, 4, ""],
  );
  assert.equal(
    only(
      mapRecord(span({
        attributes: { "gen_ai.operation.name": "generate_content", "gen_ai.conversation.id": "c" },
      })),
      "model_call",
    ).durationMs,
    250,
  );
  assert.deepEqual(mapRecord(span({ attributes: { "gen_ai.conversation.id": "c" } })), {
    status: "ignored",
  });
  assert.deepEqual(
    mapRecord(span({
      attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.conversation.id": "c" },
    })),
    { status: "unusable", reason: "No tool name on a tool event" },
  );
});

Deno.test("GenAI spans are mapped for services with no span mapping, Gemini's own operations are not", () => {
  const attributes = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "Bash",
    "gen_ai.conversation.id": "c",
  };
  assert.equal(
    only(mapRecord(span({ resource: { "service.name": "my-agent" }, attributes })), "tool_call")
      .source,
    "otlp_traces",
  );
  // Claude Code's spans are its own: a span of its that is no event of its spec stores nothing.
  assert.deepEqual(
    mapRecord(span({ resource: { "service.name": "claude-code" }, attributes })),
    { status: "ignored" },
  );
  assert.deepEqual(
    mapRecord(span({
      resource: { "service.name": "gemini-cli" },
      attributes: { ...attributes, "gen_ai.operation.name": "tool_call" },
    })),
    { status: "ignored" },
  );
});

// ------------------------------------------------------- time and unusable

Deno.test("A call's time: event.timestamp, else timeUnixNano, else observedTimeUnixNano", () => {
  const time = (over: Partial<OtlpRecord>, stamp?: string) =>
    mapRecord(logRecord({
      ...over,
      attributes: {
        "session.id": "s",
        "tool_name": "Read",
        ...(stamp === undefined ? {} : { "event.timestamp": stamp }),
      },
    }));
  const ns = (t: number) => BigInt(t) * 1_000_000n;
  assert.equal(only(time({}, "2026-11-20T10:00:05.123Z"), "tool_call").timeMs, ms(5123));
  assert.equal(only(time({}, "2026-11-20T11:00:05.123+01:00"), "tool_call").timeMs, ms(5123));
  assert.equal(only(time({}, "not a time"), "tool_call").timeMs, BASE_MS);
  assert.equal(only(time({}, ""), "tool_call").timeMs, BASE_MS);
  assert.equal(
    only(time({ timeUnixNano: null, observedTimeUnixNano: ns(ms(9)) }), "tool_call").timeMs,
    ms(9),
  );
  assert.equal(
    only(time({ timeUnixNano: ns(ms(7)) + 999_999n, observedTimeUnixNano: ns(ms(9)) }), "tool_call")
      .timeMs,
    ms(7),
  );
  assert.deepEqual(time({ timeUnixNano: null }), {
    status: "unusable",
    reason: "No parsable time",
  });
  assert.deepEqual(time({ timeUnixNano: null }, "garbage"), {
    status: "unusable",
    reason: "No parsable time",
  });
  assert.equal(
    only(time({ timeUnixNano: null }, "2026-11-20T10:00:01Z"), "tool_call").timeMs,
    ms(1000),
  );
});

Deno.test("Records without a session id or tool name are unusable", () => {
  const cases: [OtlpRecord, string][] = [
    [logRecord({ attributes: { "tool_name": "Read" } }), "No session id"],
    [logRecord({ attributes: { "session.id": "", "tool_name": "Read" } }), "No session id"],
    [logRecord({ attributes: { "session.id": "s" } }), "No tool name on a tool event"],
    [
      logRecord({
        eventName: "tool_decision",
        attributes: { "session.id": "s", decision: "reject" },
      }),
      "No tool name on a tool event",
    ],
    [logRecord({ eventName: "api_request", attributes: {} }), "No session id"],
    [
      logRecord({
        resource: { "service.name": "gemini-cli" },
        eventName: "gemini_cli.tool_call",
        attributes: { "session.id": "g" },
      }),
      "No tool name on a tool event",
    ],
    [
      logRecord({
        resource: { "service.name": "codex_cli_rs" },
        eventName: "codex.sse_event",
        attributes: { "input_token_count": "5" },
      }),
      "No session id",
    ],
  ];
  for (const [record, reason] of cases) {
    assert.deepEqual(mapRecord(record), { status: "unusable", reason });
  }
});

// ------------------------------------------------------------- dispatch

Deno.test("mapRecord dispatches on service.name, falling back to Claude's scope or event names", () => {
  const attributes = { "session.id": "s", "tool_name": "Read" };
  assert.equal(
    only(
      mapRecord(logRecord({ resource: { "service.name": "claude-code-desktop" }, attributes })),
      "tool_call",
    ).agentSystem,
    "claude-code-desktop",
  );
  assert.equal(
    only(
      mapRecord(logRecord({ resource: { "service.name": "my-claude" }, attributes })),
      "tool_call",
    )
      .agentSystem,
    "my-claude",
  );
  assert.deepEqual(
    mapRecord(logRecord({ resource: { "service.name": "other" }, scopeName: "", attributes })),
    { status: "ignored" },
  );
  assert.equal(
    only(
      mapRecord(logRecord({
        resource: {},
        scopeName: "",
        eventName: "codex.tool_result",
        attributes: { "conversation.id": "c", "tool_name": "shell" },
      })),
      "tool_call",
    ).agentSystem,
    "",
  );
  // Logs that are not an agent's, spans without a GenAI operation: ignored.
  assert.deepEqual(
    mapRecord(logRecord({ resource: { "service.name": "gemini-cli" }, eventName: "tool_result" })),
    { status: "ignored" },
  );
  // A Claude Code span is known by its name too, and keyed on `session.id`.
  const traced = only(
    mapRecord(logRecord({
      signal: "traces",
      resource: {},
      eventName: "claude_code.tool",
      attributes: { ...attributes, "gen_ai.conversation.id": "subagent-1" },
    })),
    "tool_call",
  );
  assert.equal(traced.source, "otlp_traces");
  assert.equal(traced.sessionId, "s");
});

// -------------------------------------------------------------- identity

Deno.test("Identities are stable across re-decoding and unique within each fixture", async () => {
  for (
    const name of [
      "claude_code.json",
      "claude_code_old_names.json",
      "codex.json",
      "gemini_cli.json",
      "genai_spans.json",
    ]
  ) {
    const first = (await fixtureRecords(name)).map(mapRecord);
    const again = (await fixtureRecords(name)).map((r) =>
      mapRecord({ ...r, index: r.index + 100 })
    );
    assert.deepEqual(again, first, name);
    const seen = new Map<string, TelemetryEvent>();
    for (const result of first) {
      if (result.status !== "mapped") continue;
      for (const event of result.events) {
        const key = `${event.sessionId}\u0000${event.identity}`;
        const before = seen.get(key);
        // Only a decision and the result of the same call share an identity.
        if (before !== undefined) {
          assert.deepEqual(
            [before.kind, event.kind],
            ["decision", "tool_call"],
            `${name}: ${event.identity}`,
          );
        }
        seen.set(key, event);
      }
    }
  }
});
