import assert from "node:assert/strict";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import {
  decodeExport,
  type Encoding,
  OtlpDecodeError,
  type Signal,
} from "../src/ingest/otlp/mod.ts";
import type { OtlpRecord } from "../src/model/telemetry.ts";
import {
  type JsonAnyValue,
  type JsonLogRecord,
  type JsonLogsRequest,
  type JsonResource,
  type JsonTracesRequest,
  protobufLogs,
  protobufTraces,
} from "../scripts/otlp_protobuf.ts";

const LEN = WireType.LengthDelimited;

function json(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}

function decode(body: Uint8Array, encoding: Encoding, pathSignal: Signal = "logs") {
  return decodeExport(body, { encoding, pathSignal });
}

function str(value: string): JsonAnyValue {
  return { stringValue: value };
}

// ---------------------------------------------------------------------------
// Payloads

const TRACE_ID = "5B8EFFF798038103D269B633813FC60C";
const SPAN_ID = "EEE19B7EC3C1B174";

const claudeResource: JsonResource = {
  attributes: [
    { key: "service.name", value: str("claude-code") },
    { key: "service.version", value: str("2.1.90") },
    { key: "os.type", value: str("linux") },
    { key: "host.arch", value: str("amd64") },
  ],
};

/** A Claude Code tool_result log, then a Gemini CLI tool_call log in another resource. */
const logsRequest: JsonLogsRequest = {
  resourceLogs: [
    {
      resource: claudeResource,
      scopeLogs: [{
        scope: { name: "com.anthropic.claude_code.events", version: "2.1.90" },
        logRecords: [{
          timeUnixNano: "1767225600123456789",
          observedTimeUnixNano: "1767225600200000000",
          severityNumber: 9,
          severityText: "INFO",
          body: str("claude_code.tool_result"),
          attributes: [
            { key: "event.name", value: str("tool_result") },
            { key: "session.id", value: str("sess-1") },
            { key: "tool_name", value: str("Bash") },
            { key: "success", value: str("true") },
            { key: "duration_ms", value: str("42") },
            { key: "event.sequence", value: { intValue: "7" } },
          ],
          flags: 1,
          traceId: TRACE_ID,
          spanId: SPAN_ID,
        }],
      }],
    },
    {
      resource: { attributes: [{ key: "service.name", value: str("gemini-cli") }] },
      scopeLogs: [{
        scope: { name: "gemini-cli" },
        logRecords: [{
          timeUnixNano: "1767225601000000000",
          eventName: "gemini_cli.tool_call",
          body: str("Tool call: read_file. Decision: accept. Success: true. Duration: 100ms."),
          attributes: [
            { key: "event.name", value: str("gemini_cli.tool_call") },
            { key: "duration_ms", value: { intValue: 100 } },
            { key: "success", value: { boolValue: true } },
            { key: "ratio", value: { doubleValue: 0.25 } },
            { key: "big", value: { intValue: "9007199254740993" } },
            { key: "seven_bytes", value: { intValue: "562949953421311" } },
            { key: "eight_bytes", value: { intValue: "562949953421312" } },
            { key: "negative", value: { intValue: "-3" } },
            { key: "min", value: { intValue: "-9223372036854775808" } },
            { key: "digest", value: { bytesValue: "3q2+7w==" } },
            { key: "grüße", value: str("héllo ✓") },
            { key: "nothing" },
            { key: "empty", value: {} },
            {
              key: "function_args",
              value: {
                kvlistValue: {
                  values: [
                    { key: "path", value: str("/tmp/a.txt") },
                    {
                      key: "ranges",
                      value: {
                        arrayValue: {
                          values: [{ intValue: 1 }, str("two"), {
                            kvlistValue: { values: [{ key: "deep", value: { boolValue: false } }] },
                          }, { arrayValue: { values: [] } }],
                        },
                      },
                    },
                  ],
                },
              },
            },
          ],
        }],
      }],
    },
  ],
};

const claudeRecord: OtlpRecord = {
  signal: "logs",
  resource: {
    "service.name": "claude-code",
    "service.version": "2.1.90",
    "os.type": "linux",
    "host.arch": "amd64",
  },
  scopeName: "com.anthropic.claude_code.events",
  eventName: "tool_result",
  attributes: {
    "event.name": "tool_result",
    "session.id": "sess-1",
    "tool_name": "Bash",
    "success": "true",
    "duration_ms": "42",
    "event.sequence": 7,
  },
  body: "claude_code.tool_result",
  timeUnixNano: 1767225600123456789n,
  observedTimeUnixNano: 1767225600200000000n,
  traceId: TRACE_ID.toLowerCase(),
  spanId: SPAN_ID.toLowerCase(),
  statusCode: null,
  statusMessage: "",
  index: 0,
};

const geminiRecord: OtlpRecord = {
  signal: "logs",
  resource: { "service.name": "gemini-cli" },
  scopeName: "gemini-cli",
  eventName: "gemini_cli.tool_call",
  attributes: {
    "event.name": "gemini_cli.tool_call",
    "duration_ms": 100,
    "success": true,
    "ratio": 0.25,
    "big": "9007199254740993",
    "seven_bytes": 562949953421311,
    "eight_bytes": 562949953421312,
    "negative": -3,
    "min": "-9223372036854775808",
    "digest": "deadbeef",
    "grüße": "héllo ✓",
    "nothing": null,
    "empty": null,
    "function_args": {
      path: "/tmp/a.txt",
      ranges: [1, "two", { deep: false }, []],
    },
  },
  body: "Tool call: read_file. Decision: accept. Success: true. Duration: 100ms.",
  timeUnixNano: 1767225601000000000n,
  observedTimeUnixNano: null,
  traceId: "",
  spanId: "",
  statusCode: null,
  statusMessage: "",
  index: 1,
};

/** A GenAI semconv execute_tool span and a chat span. */
const tracesRequest: JsonTracesRequest = {
  resourceSpans: [{
    resource: { attributes: [{ key: "service.name", value: str("my-agent") }] },
    scopeSpans: [{
      scope: { name: "agent.tracer" },
      spans: [
        {
          traceId: TRACE_ID,
          spanId: SPAN_ID,
          parentSpanId: "0102030405060708",
          name: "execute_tool get_weather",
          kind: 1,
          startTimeUnixNano: "1767225600000000000",
          endTimeUnixNano: "1767225600500000000",
          attributes: [
            { key: "gen_ai.operation.name", value: str("execute_tool") },
            { key: "gen_ai.tool.name", value: str("get_weather") },
          ],
          events: [{ timeUnixNano: "1767225600100000000", name: "tool.output" }],
          status: { code: 2, message: "timed out" },
        },
        {
          traceId: TRACE_ID,
          spanId: "0000000000000000",
          name: "chat",
          startTimeUnixNano: "0",
        },
      ],
    }],
  }],
};

const traceRecords: OtlpRecord[] = [
  {
    signal: "traces",
    resource: { "service.name": "my-agent" },
    scopeName: "agent.tracer",
    eventName: "execute_tool get_weather",
    attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather" },
    body: null,
    timeUnixNano: 1767225600000000000n,
    observedTimeUnixNano: 1767225600500000000n,
    traceId: TRACE_ID.toLowerCase(),
    spanId: SPAN_ID.toLowerCase(),
    statusCode: 2,
    statusMessage: "timed out",
    index: 0,
  },
  {
    signal: "traces",
    resource: { "service.name": "my-agent" },
    scopeName: "agent.tracer",
    eventName: "chat",
    attributes: {},
    body: null,
    timeUnixNano: null,
    observedTimeUnixNano: null,
    traceId: TRACE_ID.toLowerCase(),
    spanId: "",
    statusCode: 0,
    statusMessage: "",
    index: 1,
  },
];

// ---------------------------------------------------------------------------
// Decoding

Deno.test("decodeExport reads OTLP/JSON logs into records", () => {
  const result = decode(json(logsRequest), "json");
  assert.equal(result.signal, "logs");
  assert.deepEqual(result.records, [claudeRecord, geminiRecord]);
});

Deno.test("decodeExport reads OTLP/JSON traces into records", () => {
  const result = decode(json(tracesRequest), "json", "traces");
  assert.equal(result.signal, "traces");
  assert.deepEqual(result.records, traceRecords);
});

Deno.test("decodeExport routes JSON by its top key whatever the path", async (t) => {
  await t.step("spans posted to /v1/logs are traces", () => {
    const result = decode(json(tracesRequest), "json", "logs");
    assert.equal(result.signal, "traces");
    assert.deepEqual(result.records, traceRecords);
  });
  await t.step("logs posted to /v1/metrics are logs", () => {
    const result = decode(json(logsRequest), "json", "metrics");
    assert.equal(result.signal, "logs");
    assert.equal(result.records.length, 2);
  });
  await t.step("metrics posted to /v1/logs are metrics, with no records", () => {
    const metrics = { resourceMetrics: [{ resource: claudeResource, scopeMetrics: [] }] };
    assert.deepEqual(decode(json(metrics), "json", "logs"), {
      signal: "metrics",
      records: [],
      nulPossible: false,
    });
  });
  await t.step("an empty object takes the path's signal", () => {
    assert.deepEqual(decode(json({}), "json", "traces"), {
      signal: "traces",
      records: [],
      nulPossible: false,
    });
  });
});

Deno.test("decodeExport accepts snake_case keys and 64-bit ints as JSON numbers", () => {
  const body = {
    "resource_logs": [{
      resource: {
        attributes: [{ key: "service.name", value: { "string_value": "codex_cli_rs" } }],
      },
      "scope_logs": [{
        scope: { name: "codex" },
        "log_records": [{
          "time_unix_nano": 1767225600000000000,
          "observed_time_unix_nano": "1767225600000000001",
          "event_name": "codex.tool_result",
          "trace_id": TRACE_ID.toLowerCase(),
          attributes: [
            { key: "n", value: { "int_value": 12 } },
            { key: "b", value: { "bool_value": true } },
            { key: "d", value: { "double_value": "1.5" } },
            { key: "a", value: { "array_value": { values: [{ "string_value": "x" }] } } },
            { key: "k", value: { "kvlist_value": { values: [{ key: "y", value: {} }] } } },
            { key: "bytes", value: { "bytes_value": "AAEC" } },
          ],
        }],
      }],
    }],
  };
  const [record] = decode(json(body), "json").records;
  assert.ok(record);
  assert.deepEqual(record.resource, { "service.name": "codex_cli_rs" });
  assert.equal(record.scopeName, "codex");
  assert.equal(record.eventName, "codex.tool_result");
  assert.equal(record.timeUnixNano, 1767225600000000000n);
  assert.equal(record.observedTimeUnixNano, 1767225600000000001n);
  assert.equal(record.traceId, TRACE_ID.toLowerCase());
  assert.deepEqual(record.attributes, {
    n: 12,
    b: true,
    d: 1.5,
    a: ["x"],
    k: { y: null },
    bytes: "000102",
  });
});

Deno.test("decodeExport tolerates base64 ids in JSON and keeps __proto__ keys as data", () => {
  const body = {
    resourceLogs: [{
      scopeLogs: [{
        logRecords: [{
          traceId: "W47/95gDgQPSabYzgT/GDA==",
          spanId: "7uGbfsPBsXQ=",
          attributes: [{ key: "__proto__", value: str("polluted?") }],
        }],
      }],
    }],
  };
  const [record] = decode(json(body), "json").records;
  assert.ok(record);
  assert.equal(record.traceId, TRACE_ID.toLowerCase());
  assert.equal(record.spanId, SPAN_ID.toLowerCase());
  assert.equal(Object.getPrototypeOf(record.attributes), Object.prototype);
  assert.deepEqual(Object.entries(record.attributes), [["__proto__", "polluted?"]]);
});

Deno.test("decodeExport reads protobuf logs, skipping unknown fields", () => {
  for (const unknownFields of [false, true]) {
    const result = decode(protobufLogs(logsRequest, unknownFields), "protobuf");
    assert.equal(result.signal, "logs");
    assert.deepEqual(result.records, [claudeRecord, geminiRecord]);
  }
});

Deno.test("decodeExport reads protobuf traces, skipping unknown fields", () => {
  for (const unknownFields of [false, true]) {
    const result = decode(protobufTraces(tracesRequest, unknownFields), "protobuf", "traces");
    assert.equal(result.signal, "traces");
    assert.deepEqual(result.records, traceRecords);
  }
});

Deno.test("decodeExport routes protobuf by the path's signal", () => {
  const metrics = new BinaryWriter().tag(1, LEN).fork().tag(2, LEN).bytes(new Uint8Array(4))
    .join().finish();
  assert.deepEqual(decode(metrics, "protobuf", "metrics"), {
    signal: "metrics",
    records: [],
    nulPossible: false,
  });
  const spans = decode(protobufTraces(tracesRequest), "protobuf", "traces");
  assert.equal(spans.signal, "traces");
  assert.equal(spans.records.length, 2);
});

Deno.test("decodeExport reads a resource sent after its scopes", () => {
  const w = new BinaryWriter();
  w.tag(1, LEN).fork(); // ResourceLogs
  w.tag(2, LEN).fork(); // ScopeLogs
  w.tag(2, LEN).fork().tag(12, LEN).string("late").join(); // LogRecord
  w.tag(1, LEN).fork().tag(1, LEN).string("late.scope").join(); // scope after its record
  w.join();
  w.tag(1, LEN).fork(); // Resource
  w.tag(1, LEN).fork().tag(1, LEN).string("service.name");
  w.tag(2, LEN).fork().tag(1, LEN).string("claude-code").join().join();
  w.join();
  w.join();
  const [record] = decode(w.finish(), "protobuf").records;
  assert.ok(record);
  assert.equal(record.eventName, "late");
  assert.equal(record.scopeName, "late.scope");
  assert.deepEqual(record.resource, { "service.name": "claude-code" });
});

Deno.test("a log's event name comes from eventName, then event.name, then a string body", async (t) => {
  const cases: { name: string; record: JsonLogRecord; eventName: string }[] = [
    {
      name: "the event.name attribute wins over eventName (Codex: a source location) and the body",
      record: {
        eventName: "event otel/src/tool_result.rs:54",
        attributes: [{ key: "event.name", value: str("codex.tool_result") }],
        body: str("body"),
      },
      eventName: "codex.tool_result",
    },
    {
      name: "eventName wins over the body when no event.name attribute is sent",
      record: { eventName: "claude_code.tool_result", body: str("body") },
      eventName: "claude_code.tool_result",
    },
    {
      name: "the event.name attribute wins over the body",
      record: { attributes: [{ key: "event.name", value: str("tool_result") }], body: str("b") },
      eventName: "tool_result",
    },
    {
      name: "a non-string event.name attribute falls through to the body",
      record: { attributes: [{ key: "event.name", value: { intValue: 3 } }], body: str("b") },
      eventName: "b",
    },
    {
      name: "a string body is the last resort",
      record: { body: str("claude_code.api_request") },
      eventName: "claude_code.api_request",
    },
    {
      name: "a structured body gives no name",
      record: { body: { kvlistValue: { values: [{ key: "a", value: str("b") }] } } },
      eventName: "",
    },
    { name: "nothing gives no name", record: {}, eventName: "" },
  ];
  for (const { name, record, eventName } of cases) {
    await t.step(name, () => {
      const request = { resourceLogs: [{ scopeLogs: [{ logRecords: [record] }] }] };
      assert.equal(decode(json(request), "json").records[0]?.eventName, eventName);
      assert.equal(decode(protobufLogs(request), "protobuf").records[0]?.eventName, eventName);
    });
  }
});

Deno.test("zero times decode to null and all-zero ids to empty strings", () => {
  const request: JsonLogsRequest = {
    resourceLogs: [{
      scopeLogs: [{
        logRecords: [{
          timeUnixNano: "0",
          observedTimeUnixNano: "0",
          traceId: "00000000000000000000000000000000",
          spanId: "0000000000000000",
        }, { traceId: "", spanId: "" }],
      }],
    }],
  };
  for (const encoding of ["json", "protobuf"] as const) {
    const body = encoding === "json" ? json(request) : protobufLogs(request);
    for (const record of decode(body, encoding).records) {
      assert.equal(record.timeUnixNano, null);
      assert.equal(record.observedTimeUnixNano, null);
      assert.equal(record.traceId, "");
      assert.equal(record.spanId, "");
      assert.equal(record.scopeName, "");
      assert.deepEqual(record.resource, {});
      assert.equal(record.body, null);
    }
  }
});

Deno.test("records are indexed across resources and scopes", () => {
  const scope = (names: string[]) => ({ logRecords: names.map((name) => ({ eventName: name })) });
  const request: JsonLogsRequest = {
    resourceLogs: [
      { scopeLogs: [scope(["a", "b"]), scope([]), scope(["c"])] },
      { scopeLogs: [scope(["d"])] },
    ],
  };
  for (const encoding of ["json", "protobuf"] as const) {
    const body = encoding === "json" ? json(request) : protobufLogs(request);
    const records = decode(body, encoding).records;
    assert.deepEqual(records.map((r) => [r.index, r.eventName]), [
      [0, "a"],
      [1, "b"],
      [2, "c"],
      [3, "d"],
    ]);
  }
});

Deno.test("an empty body decodes to zero records", () => {
  for (const encoding of ["json", "protobuf"] as const) {
    for (const pathSignal of ["logs", "traces", "metrics"] as const) {
      assert.deepEqual(decode(new Uint8Array(0), encoding, pathSignal), {
        signal: pathSignal,
        records: [],
        nulPossible: false,
      });
    }
  }
});

Deno.test("decodeExport rejects malformed JSON with OtlpDecodeError", async (t) => {
  const inLog = (record: unknown) => ({
    resourceLogs: [{ scopeLogs: [{ logRecords: [record] }] }],
  });
  const attribute = (value: unknown) => inLog({ attributes: [{ key: "k", value }] });
  const cases: { name: string; body: Uint8Array }[] = [
    { name: "not JSON", body: new TextEncoder().encode("{resourceLogs:") },
    { name: "whitespace only", body: new TextEncoder().encode("  ") },
    { name: "invalid UTF-8", body: new Uint8Array([0x7b, 0xff, 0x7d]) },
    { name: "an array", body: json([]) },
    { name: "a string", body: json("resourceLogs") },
    { name: "null", body: json(null) },
    { name: "resourceLogs not an array", body: json({ resourceLogs: {} }) },
    { name: "a resource entry not an object", body: json({ resourceLogs: [1] }) },
    { name: "resourceMetrics entries not objects", body: json({ resourceMetrics: ["x"] }) },
    { name: "scopeLogs not an array", body: json({ resourceLogs: [{ scopeLogs: "x" }] }) },
    { name: "a log record not an object", body: json(inLog("x")) },
    {
      name: "a scope name not a string",
      body: json({ resourceLogs: [{ scopeLogs: [{ scope: { name: 1 } }] }] }),
    },
    { name: "attributes not an array", body: json(inLog({ attributes: {} })) },
    { name: "an attribute key not a string", body: json(inLog({ attributes: [{ key: 1 }] })) },
    { name: "a value not an object", body: json(attribute("text")) },
    { name: "stringValue not a string", body: json(attribute({ stringValue: 1 })) },
    { name: "boolValue not a boolean", body: json(attribute({ boolValue: "true" })) },
    { name: "intValue not an integer", body: json(attribute({ intValue: "1.5" })) },
    { name: "doubleValue not a number", body: json(attribute({ doubleValue: "x" })) },
    {
      name: "arrayValue values not an array",
      body: json(attribute({ arrayValue: { values: 1 } })),
    },
    { name: "bytesValue not base64", body: json(attribute({ bytesValue: "!!" })) },
    { name: "a time not an integer", body: json(inLog({ timeUnixNano: "soon" })) },
    { name: "a negative time", body: json(inLog({ timeUnixNano: -1 })) },
    { name: "an id not hex or base64", body: json(inLog({ traceId: "not an id!" })) },
    { name: "an id not a string", body: json(inLog({ spanId: 5 })) },
    { name: "eventName not a string", body: json(inLog({ eventName: 5 })) },
    {
      name: "status code not an integer",
      body: json({ resourceSpans: [{ scopeSpans: [{ spans: [{ status: { code: "bad" } }] }] }] }),
    },
    {
      name: "values nested too deep",
      body: json(attribute(
        Array.from({ length: 100 }).reduce<unknown>(
          (inner) => ({ arrayValue: { values: [inner] } }),
          { stringValue: "bottom" },
        ),
      )),
    },
  ];
  for (const { name, body } of cases) {
    await t.step(name, () => {
      assert.throws(() => decode(body, "json"), OtlpDecodeError);
    });
  }
});

Deno.test("decodeExport rejects truncated or invalid protobuf with OtlpDecodeError", async (t) => {
  const valid = protobufLogs(logsRequest, true);
  await t.step("invalid payloads", () => {
    const deep = new BinaryWriter();
    deep.tag(1, LEN).fork().tag(2, LEN).fork().tag(2, LEN).fork().tag(6, LEN).fork();
    deep.tag(1, LEN).string("k").tag(2, LEN).fork();
    for (let i = 0; i < 100; i++) deep.tag(5, LEN).fork().tag(1, LEN).fork();
    for (let i = 0; i < 100; i++) deep.join().join();
    deep.join().join().join().join().join();
    const framing: Uint8Array[] = [
      new Uint8Array([0x0a, 0x05, 0x01]), // length past the end
      new Uint8Array([0x00]), // field number 0
      new Uint8Array([0x0f]), // wire type 7
      new Uint8Array([0x0c]), // a stray end-group
      new Uint8Array([0x08, 0xff]), // truncated varint
      valid.subarray(0, valid.length - 1),
    ];
    const content: Uint8Array[] = [
      valid.subarray(0, Math.floor(valid.length / 2)),
      new TextEncoder().encode('{"resourceLogs":[]}'),
      new Uint8Array([0x0a, 0x04, 0x12, 0x02, 0x12, 0x05]), // inner length runs past its message
    ];
    for (const body of [...framing, ...content]) {
      for (const pathSignal of ["logs", "traces"] as const) {
        assert.throws(() => decode(body, "protobuf", pathSignal), OtlpDecodeError);
      }
    }
    // A log attribute whose value nests arrays 100 deep.
    assert.throws(() => decode(deep.finish(), "protobuf", "logs"), OtlpDecodeError);
    // Metrics are not decoded, but their framing is checked.
    for (const body of framing) {
      assert.throws(() => decode(body, "protobuf", "metrics"), OtlpDecodeError);
    }
  });
  await t.step("every truncation either decodes or throws OtlpDecodeError", () => {
    for (let length = 0; length < valid.length; length++) {
      try {
        decode(valid.subarray(0, length), "protobuf");
      } catch (error) {
        assert.ok(error instanceof OtlpDecodeError, `length ${length}: ${error}`);
      }
    }
  });
  await t.step("random bytes either decode or throw OtlpDecodeError", () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let i = 0; i < 2000; i++) {
      const body = Uint8Array.from(
        { length: 1 + Math.floor(random() * 64) },
        () => Math.floor(random() * 256),
      );
      for (const pathSignal of ["logs", "traces"] as const) {
        try {
          decode(body, "protobuf", pathSignal);
        } catch (error) {
          assert.ok(error instanceof OtlpDecodeError, String(error));
        }
      }
    }
  });
});

// ---------------------------------------------------------------------------
// Throughput (printed, not asserted)

function claudeToolResults(count: number): JsonLogsRequest {
  const logRecords: JsonLogRecord[] = [];
  for (let i = 0; i < count; i++) {
    const time = 1767225600000000000n + BigInt(i) * 1000000n;
    logRecords.push({
      timeUnixNano: String(time),
      observedTimeUnixNano: String(time + 5000n),
      severityNumber: 9,
      body: str("claude_code.tool_result"),
      attributes: [
        { key: "user.id", value: str("f".repeat(64)) },
        { key: "session.id", value: str("0b1f6c1e-8f6a-4a51-9d0c-5c1d4e0a2b3c") },
        { key: "organization.id", value: str("2a0c9d4e-1b2c-4d5e-8f90-123456789abc") },
        { key: "user.email", value: str("dev@example.com") },
        { key: "terminal.type", value: str("vscode") },
        { key: "event.name", value: str("tool_result") },
        { key: "event.timestamp", value: str("2026-01-01T00:00:00.000Z") },
        { key: "event.sequence", value: { intValue: i } },
        { key: "prompt.id", value: str("7d1c2e3f-0000-4000-8000-00000000000" + (i % 10)) },
        { key: "tool_name", value: str(i % 3 === 0 ? "Bash" : "Read") },
        { key: "tool_use_id", value: str(`toolu_01ABCDEFGHJKLMNPQRSTUV${i}`) },
        { key: "success", value: str("true") },
        { key: "duration_ms", value: str(String(10 + (i % 500))) },
        { key: "decision_type", value: str("accept") },
        { key: "decision_source", value: str("config") },
        { key: "tool_result_size_bytes", value: str("2048") },
        {
          key: "tool_input",
          value: str(JSON.stringify({
            command: `git status --short && ls -la src/${i}`,
            description: "Show working tree status",
          })),
        },
      ],
    });
  }
  return {
    resourceLogs: [{
      resource: claudeResource,
      scopeLogs: [{ scope: { name: "com.anthropic.claude_code.events" }, logRecords }],
    }],
  };
}

Deno.test("decodeExport throughput for 10k Claude Code tool_result logs (printed)", () => {
  const request = claudeToolResults(10_000);
  const bodies = { json: json(request), protobuf: protobufLogs(request) };
  for (const encoding of ["json", "protobuf"] as const) {
    const body = bodies[encoding];
    let best = Infinity;
    for (let run = 0; run < 12; run++) {
      const start = performance.now();
      const { records } = decode(body, encoding);
      const elapsed = performance.now() - start;
      assert.equal(records.length, 10_000);
      if (run >= 4) best = Math.min(best, elapsed);
    }
    const perSecond = Math.round(10_000 / (best / 1000));
    // deno-lint-ignore no-console
    console.log(
      `  ${encoding}: ${(body.length / 1024 / 1024).toFixed(1)} MiB, ` +
        `${best.toFixed(1)} ms, ${perSecond.toLocaleString("en")} records/s`,
    );
  }
});
