/**
 * Unit tests of the ingest limits (src/ingest/limits.ts) through the real
 * decoder and mappers: each out-of-range value rejects its record with a
 * reason, each boundary value passes, and each text over its cap is rejected
 * or truncated as the table says.
 */
import assert from "node:assert/strict";
import { mapRecord } from "../src/ingest/agents/mod.ts";
import {
  cutBeforeToken,
  ERROR_MESSAGE_MAX_BYTES,
  ID_MAX_BYTES,
  mapWithinLimits,
  TEXT_MAX_BYTES,
  TIME_NOT_FIXED64,
  truncateJson,
  utf8Bytes,
  utf8Prefix,
} from "../src/ingest/limits.ts";
import { decodeExport } from "../src/ingest/otlp/mod.ts";
import type { MapResult, ModelCallEvent, ToolCallEvent } from "../src/model/telemetry.ts";
import { apiRequest, claudeEvent, claudeExport, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

const encoder = new TextEncoder();

/** Decodes one OTLP/JSON export and maps its records within the limits. */
function mapAll(body: unknown, pathSignal: "logs" | "traces" = "logs"): MapResult[] {
  const { records } = decodeExport(encoder.encode(JSON.stringify(body)), {
    encoding: "json",
    pathSignal,
  });
  return records.map((record) => mapWithinLimits(record, mapRecord));
}

function only(body: unknown, pathSignal: "logs" | "traces" = "logs"): MapResult {
  const results = mapAll(body, pathSignal);
  assert.equal(results.length, 1);
  return results[0]!;
}

function rejected(result: MapResult, reason: RegExp): void {
  assert.equal(result.status, "unusable", JSON.stringify(result).slice(0, 300));
  if (result.status === "unusable") assert.match(result.reason, reason);
}

function toolCall(result: MapResult): ToolCallEvent {
  assert.equal(result.status, "mapped", JSON.stringify(result).slice(0, 300));
  if (result.status !== "mapped") throw new Error("unreachable");
  return result.events[0] as ToolCallEvent;
}

function call(attrs: Record<string, string | number | boolean | undefined>, timeMs = T0) {
  return claudeEvent("tool_result", timeMs, {
    "session.id": "s1",
    "tool_name": "Bash",
    "tool_use_id": "u1",
    "success": "true",
    "duration_ms": "5",
    ...attrs,
  });
}

function withTime(record: Record<string, unknown>, fields: Record<string, unknown>) {
  return { ...record, ...fields };
}

/** The record with one more attribute, its AnyValue as given (e.g. a JSON number as a double). */
function withAttribute(record: { attributes: unknown[] }, key: string, value: unknown) {
  return { ...record, attributes: [...record.attributes, { key, value }] };
}

Deno.test("times out of range reject their record with the reason", async (t) => {
  const cases: { name: string; record: unknown; reason: RegExp }[] = [
    {
      name: 'timeUnixNano "1" + 40 zeros',
      record: withTime(call({ "event.timestamp": undefined }), {
        timeUnixNano: "1" + "0".repeat(40),
      }),
      reason: /^timeUnixNano out of range/,
    },
    {
      name: "timeUnixNano 1e300 as a JSON number",
      record: withTime(call({}), { timeUnixNano: 1e300 }),
      reason: /^timeUnixNano out of range/,
    },
    {
      name: "observedTimeUnixNano above 2^64-1 beside a good time",
      record: withTime(call({}), { observedTimeUnixNano: "18446744073709551616" }),
      reason: /^observedTimeUnixNano out of range/,
    },
    {
      name: "event.timestamp before 1970",
      record: call({ "event.timestamp": "1969-12-31T23:59:59.999Z" }),
      reason: /^event.timestamp out of range/,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => rejected(only(claudeExport([c.record])), c.reason));
  }
  await t.step("the last nanosecond of fixed64 and 1970-01-01 pass", () => {
    const late = withTime(call({ "event.timestamp": undefined }), {
      timeUnixNano: "18446744073709551615",
    });
    assert.equal(toolCall(only(claudeExport([late]))).timeMs, 18446744073709);
    const epoch = call({ "event.timestamp": "1970-01-01T00:00:00.000Z" });
    assert.equal(toolCall(only(claudeExport([epoch]))).timeMs, 0);
  });
});

Deno.test("a span start or end time past fixed64 rejects the span", () => {
  const span = (start: string, end: string) => ({
    resourceSpans: [{
      resource: { attributes: [{ key: "service.name", value: { stringValue: "my-agent" } }] },
      scopeSpans: [{
        spans: [{
          traceId: "0af7651916cd43dd8448eb211c80319c",
          spanId: "b7ad6b7169203331",
          name: "execute_tool Bash",
          startTimeUnixNano: start,
          endTimeUnixNano: end,
          attributes: [
            { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
            { key: "gen_ai.conversation.id", value: { stringValue: "conv" } },
            { key: "gen_ai.tool.name", value: { stringValue: "Bash" } },
          ],
        }],
      }],
    }],
  });
  const good = `${BigInt(T0) * 1_000_000n}`;
  rejected(only(span("1" + "0".repeat(40), good), "traces"), /^startTimeUnixNano out of range/);
  rejected(only(span(good, "1" + "0".repeat(40)), "traces"), /^endTimeUnixNano out of range/);
  assert.equal(
    toolCall(only(span(good, `${BigInt(T0 + 7) * 1_000_000n}`), "traces")).durationMs,
    7,
  );
});

Deno.test("numbers out of range reject their record with the reason", async (t) => {
  const model = (attrs: Record<string, string | number>) =>
    claudeEvent("api_request", T0, {
      "session.id": "s1",
      "model": "m",
      "request_id": "r1",
      "input_tokens": "1",
      ...attrs,
    });
  const cases: { name: string; record: unknown; reason: RegExp }[] = [
    {
      name: "duration_ms 2^63",
      record: call({ "duration_ms": "9223372036854775808" }),
      reason: /^duration_ms out of range/,
    },
    {
      name: "duration_ms 1e300",
      record: withAttribute(call({ "duration_ms": undefined }), "duration_ms", {
        doubleValue: 1e300,
      }),
      reason: /^duration_ms out of range/,
    },
    {
      name: "a negative duration",
      record: call({ "duration_ms": "-5" }),
      reason: /^duration_ms out of range/,
    },
    {
      name: "a duration of Infinity",
      record: call({ "duration_ms": "Infinity" }),
      reason: /^A number out of range/,
    },
    {
      name: "a result size above 2^53-1",
      record: call({ "tool_result_size_bytes": "9007199254740993" }),
      reason: /^A count out of range/,
    },
    {
      name: "input tokens 2^63",
      record: model({ "input_tokens": "9223372036854775808" }),
      reason: /^A count out of range/,
    },
    {
      name: "output tokens negative",
      record: model({ "output_tokens": -3 }),
      reason: /^A count out of range/,
    },
    {
      name: "cost_usd negative",
      record: model({ "cost_usd": "-0.5" }),
      reason: /^cost_usd out of range/,
    },
    {
      name: "cost_usd 1e300",
      record: model({ "cost_usd": "1e300" }),
      reason: /^cost_usd out of range/,
    },
    {
      name: "a duration of NaN as a double",
      record: withAttribute(call({ "duration_ms": undefined }), "duration_ms", {
        doubleValue: "NaN",
      }),
      reason: /^A number out of range: NaN/,
    },
    {
      name: "event.sequence 2^63",
      record: call({ "tool_use_id": undefined, "event.sequence": "9223372036854775808" }),
      reason: /^event.sequence out of range/,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => rejected(only(claudeExport([c.record])), c.reason));
  }
  await t.step("2^53-1 tokens and a cost of 1,000,000 pass", () => {
    const result = only(
      claudeExport([model({ "input_tokens": "9007199254740991", "cost_usd": "1000000" })]),
    );
    assert.equal(result.status, "mapped");
    if (result.status !== "mapped") return;
    const event = result.events[0] as ModelCallEvent;
    assert.equal(event.inputTokens, Number.MAX_SAFE_INTEGER);
    assert.equal(event.costUsd, 1_000_000);
  });
});

Deno.test("one bad record leaves the other records of its export mapped", () => {
  const results = mapAll(claudeExport([
    toolResult({ session: "s1", id: "a", tool: "Bash", timeMs: T0 }),
    call({ "tool_use_id": "b", "duration_ms": "9223372036854775808" }),
    apiRequest({ session: "s1", timeMs: T0, model: "m", requestId: "r" }),
  ]));
  assert.deepEqual(results.map((r) => r.status), ["mapped", "unusable", "mapped"]);
});

Deno.test("identifiers and keys over 256 bytes reject the record; 256 bytes pass", async (t) => {
  const long = "x".repeat(ID_MAX_BYTES + 1);
  const cases: { name: string; record: unknown; service?: string; reason: RegExp }[] = [
    {
      name: "session id",
      record: call({ "session.id": long }),
      reason: /^session id too long: 257 bytes/,
    },
    {
      name: "tool use id",
      record: call({ "tool_use_id": long }),
      reason: /^tool (call|use) id too long/,
    },
    { name: "tool name", record: call({ "tool_name": long }), reason: /^tool name too long/ },
    { name: "prompt id", record: call({ "prompt.id": long }), reason: /^prompt id too long/ },
    {
      name: "agent (service.name)",
      record: call({}),
      service: `claude-code${long}`,
      reason: /^agent \(service.name\) too long/,
    },
    {
      name: "model",
      record: claudeEvent("api_request", T0, { "session.id": "s", "model": long }),
      reason: /^model too long/,
    },
    {
      // A Codex spawn message names the parent thread: capped as every id.
      name: "parent session id",
      record: claudeEvent("codex.agent_communication", T0, {
        kind: "spawn",
        state: "send",
        "sender_thread_id": long,
        "receiver_thread_id": "child",
      }),
      service: "codex_exec",
      reason: /^parent session id too long/,
    },
    {
      name: "a session id of 86 three-byte characters (258 bytes)",
      record: call({ "session.id": "€".repeat(86) }),
      reason: /^session id too long: 258 bytes/,
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => rejected(only(claudeExport([c.record], c.service)), c.reason));
  }
  await t.step("exactly 256 bytes pass", () => {
    const id = "y".repeat(ID_MAX_BYTES);
    const event = toolCall(only(claudeExport([call({ "session.id": id, "tool_name": id })])));
    assert.equal(event.sessionId, id);
    assert.equal(event.toolName, id);
  });
});

Deno.test("a resource session id of 1 MiB rejects every record of that resource", () => {
  const body = claudeExport(
    Array.from({ length: 3 }, (_, i) => call({ "session.id": undefined, "tool_use_id": `u${i}` })),
  );
  // deno-lint-ignore no-explicit-any
  (body.resourceLogs[0]!.resource.attributes as any[]).push({
    key: "session.id",
    value: { stringValue: "s".repeat(1 << 20) },
  });
  for (const result of mapAll(body)) rejected(result, /^session id too long: 1048576 bytes/);
});

Deno.test("long texts are truncated to their cap with a visible marker", async (t) => {
  await t.step("error message: 8 KiB", () => {
    const event = toolCall(
      only(claudeExport([call({ "success": "false", "error": "e ".repeat(50_000) })])),
    );
    assert.ok(utf8Bytes(event.errorMessage!) <= ERROR_MESSAGE_MAX_BYTES);
    assert.ok(utf8Bytes(event.errorMessage!) > ERROR_MESSAGE_MAX_BYTES - 64);
    assert.match(event.errorMessage!, /^(e )+…\[truncated: 100000 bytes\]$/);
  });
  await t.step("a long agent version is cut, not rejected", () => {
    const event = toolCall(only(claudeExport([call({ "app.version": "9".repeat(1000) })])));
    assert.ok(utf8Bytes(event.agentVersion) <= 256);
    assert.match(event.agentVersion, /…\[truncated: 1000 bytes\]$/);
  });
  await t.step("arguments stay a JSON object with their keys; long values are cut", () => {
    const input = { "file_path": "/home/dev/notes.md", content: "€".repeat(400_000), n: 3 };
    const event = toolCall(
      only(claudeExport([call({ "tool_name": "Write", "tool_input": JSON.stringify(input) })])),
    );
    assert.ok(utf8Bytes(event.arguments!) <= TEXT_MAX_BYTES, `${utf8Bytes(event.arguments!)}`);
    assert.ok(utf8Bytes(event.arguments!) > TEXT_MAX_BYTES - 256, "keeps as much as fits");
    const parsed = JSON.parse(event.arguments!);
    assert.equal(parsed.file_path, "/home/dev/notes.md");
    assert.equal(parsed.n, 3);
    assert.match(parsed.content, /^€+…\[truncated: 1200000 bytes\]$/);
  });
  await t.step("result: 64 KiB", () => {
    const records = [{
      resourceLogs: [{
        resource: { attributes: [{ key: "service.name", value: { stringValue: "codex_cli_rs" } }] },
        scopeLogs: [{
          logRecords: [{
            timeUnixNano: `${BigInt(T0) * 1_000_000n}`,
            attributes: [
              { key: "event.name", value: { stringValue: "codex.tool_result" } },
              { key: "conversation.id", value: { stringValue: "c1" } },
              { key: "tool_name", value: { stringValue: "shell" } },
              { key: "call_id", value: { stringValue: "k1" } },
              { key: "output", value: { stringValue: "o".repeat(1 << 20) } },
            ],
          }],
        }],
      }],
    }];
    const event = toolCall(only(records[0]));
    assert.ok(utf8Bytes(event.result!) <= TEXT_MAX_BYTES);
    assert.match(event.result!, /…\[truncated: 1048576 bytes\]$/);
    assert.equal(event.resultSizeBytes, 1 << 20, "the size reported is the size sent");
  });
});

Deno.test("truncateJson keeps every answer valid JSON within the cap", () => {
  const cases = [
    JSON.stringify("a".repeat(10_000)),
    JSON.stringify("\u0001".repeat(10_000)), // each escapes to 6 bytes
    JSON.stringify(Array.from({ length: 5000 }, (_, i) => i)), // numbers only
    JSON.stringify({ ["k".repeat(5000)]: 1 }), // a key over the cap
    JSON.stringify({ a: "😀".repeat(3000), b: ["x".repeat(3000), { c: "y".repeat(3000) }] }),
    "not json " + "z".repeat(5000),
  ];
  for (const text of cases) {
    const out = truncateJson(text, 1024);
    assert.ok(utf8Bytes(out) <= 1024, `${utf8Bytes(out)} bytes for ${text.slice(0, 20)}`);
    JSON.parse(out);
    assert.match(out, /truncated: \d+ bytes/);
  }
});

Deno.test("utf8Prefix never splits a character and utf8Bytes counts as TextEncoder does", () => {
  const text = "a€😀b\ud800c";
  for (let max = 0; max <= 16; max++) {
    const prefix = utf8Prefix(text, max);
    assert.ok(text.startsWith(prefix));
    const bytes = encoder.encode(prefix).length;
    assert.ok(bytes <= max);
    assert.equal(utf8Bytes(prefix), bytes);
    assert.ok(!/[\ud800-\udbff]$/.test(prefix) || prefix.endsWith("\ud800"));
  }
  assert.equal(utf8Bytes(text), encoder.encode(text).length);
});

Deno.test("the JSON decoder reads a time of any length without parsing it as a bigint", () => {
  const digits = "1" + "0".repeat(2_000_000);
  const started = performance.now();
  const { records } = decodeExport(
    encoder.encode(JSON.stringify(claudeExport([withTime(call({}), { timeUnixNano: digits })]))),
    { encoding: "json", pathSignal: "logs" },
  );
  assert.equal(records[0]!.timeUnixNano, TIME_NOT_FIXED64);
  assert.ok(performance.now() - started < 1000, "no quadratic bigint parse");
  const zeros = "0".repeat(30) + "1767225600000000000";
  const padded = decodeExport(
    encoder.encode(JSON.stringify(claudeExport([withTime(call({}), { timeUnixNano: zeros })]))),
    { encoding: "json", pathSignal: "logs" },
  );
  assert.equal(padded.records[0]!.timeUnixNano, 1767225600000000000n, "leading zeros are zeros");
});

Deno.test("a cut never leaves part of a token (half a secret would escape detection)", () => {
  const secret = `ghp_${"A1b2C3d4E5".repeat(3)}f6G7h8`;
  for (let pad = 0; pad < 40; pad++) {
    const text = `${"x ".repeat(100)}${"y".repeat(pad)} token=${secret} tail`;
    const cut = cutBeforeToken(text, 230);
    assert.ok(text.startsWith(cut));
    assert.ok(!cut.includes("ghp_"), `pad ${pad}: ${cut.slice(-30)}`);
  }
  assert.equal(cutBeforeToken("abc def", 5), "abc ", "backs off to the token's start");
  assert.equal(cutBeforeToken("abc def", 4), "abc ", "a cut at a boundary stays");
  assert.equal(cutBeforeToken("a".repeat(2000), 1000), "a".repeat(488), "a run past the back-off");
  const event = toolCall(only(claudeExport([call({
    "success": "false",
    "error": `${"e ".repeat(4070)}${secret} and more text after it`,
  })])));
  assert.ok(!event.errorMessage!.includes("ghp_"), event.errorMessage!.slice(-60));
  assert.match(event.errorMessage!, /…\[truncated: \d+ bytes\]$/);
});
