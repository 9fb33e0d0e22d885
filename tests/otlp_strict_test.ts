/**
 * Issue #32 item 5, "Lenient decoding": what a strict OTLP receiver refuses.
 *
 * 1. A known field with another wire type than its schema's is malformed
 *    (400), in every message the protobuf decoders read; unknown field
 *    numbers are still skipped.
 * 2. A varint longer than 10 bytes is malformed, wherever it is (a skipped
 *    field, a tag, a length); a tag or a length must fit in 32 bits.
 * 3. An array or kvlist where a string is read is never JSON-encoded into
 *    one: a session id or tool name sent so makes the record unusable, any
 *    other text field sent so is absent.
 * 4. NaN and infinities where a number is read reject the record the same
 *    way, whether sent as doubles or as text.
 */
import assert from "node:assert/strict";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { decodeMetrics, receiveMetrics } from "../src/ingest/metrics/mod.ts";
import { decodeExport, OtlpDecodeError, type Signal } from "../src/ingest/otlp/mod.ts";
import { receiveExport } from "../src/ingest/receive.ts";
import type { ModelCallEvent, ToolCallEvent } from "../src/model/telemetry.ts";
import { engineTest, startTestServer } from "./_harness.ts";
import { apiRequest, claudeExport, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

const { Varint: VARINT, Bit64: I64, LengthDelimited: LEN, Bit32: I32 } = WireType;
const encoder = new TextEncoder();

// ---------------------------------------------------------------------------
// Protobuf bodies with a hook at the end of every message the decoders read

type Level =
  | "request"
  | "resourceEntry"
  | "resource"
  | "scopeEntry"
  | "scope"
  | "record"
  | "status"
  | "keyValue"
  | "anyValue"
  | "kvlist"
  | "arrayValue"
  | "metric"
  | "gauge"
  | "sum"
  | "histogram"
  | "exponentialHistogram"
  | "summary"
  | "numberPoint"
  | "histogramPoint";

/** Fields to append at the end of the message of each level. */
type Extras = Partial<Record<Level, (w: BinaryWriter) => void>>;
type Write = (w: BinaryWriter) => void;

/** Writes the fields of a message, then the extras of its level. */
function fieldsOf(extras: Extras, level: Level, fields: Write[]): Write {
  return (w) => {
    for (const write of fields) write(w);
    extras[level]?.(w);
  };
}

/** A length-delimited (message) field. */
function nested(field: number, extras: Extras, level: Level, fields: Write[]): Write {
  return (w) => {
    w.tag(field, LEN).fork();
    fieldsOf(extras, level, fields)(w);
    w.join();
  };
}

const text = (field: number, value: string): Write => (w) => w.tag(field, LEN).string(value);

function body(extras: Extras, entries: Write[]): Uint8Array {
  const w = new BinaryWriter();
  fieldsOf(extras, "request", entries)(w);
  return w.finish();
}

/** `KeyValue` `key` = string `value`. */
function stringAttribute(field: number, key: string, value: string): Write {
  return (w) => {
    w.tag(field, LEN).fork().tag(1, LEN).string(key);
    w.tag(2, LEN).fork().tag(1, LEN).string(value).join();
    w.join();
  };
}

/** `KeyValue` `k` = kvlist { a: array [ "x" ] }, with the hooks of every value level. */
function nestedAttribute(field: number, x: Extras): Write {
  return nested(field, x, "keyValue", [
    text(1, "k"),
    nested(2, x, "anyValue", [
      nested(6, x, "kvlist", [
        nested(1, {}, "keyValue", [
          text(1, "a"),
          nested(2, {}, "anyValue", [nested(5, x, "arrayValue", [nested(1, {}, "anyValue", [
            text(1, "x"),
          ])])]),
        ]),
      ]),
    ]),
  ]);
}

function resource(x: Extras, service: string): Write {
  return nested(1, x, "resource", [stringAttribute(1, "service.name", service)]);
}

function scope(x: Extras, name: string): Write {
  return nested(1, x, "scope", [text(1, name)]);
}

const NS = BigInt(T0) * 1_000_000n;

/** An ExportLogsServiceRequest of one Claude Code `tool_result` log record. */
function logsBody(x: Extras = {}): Uint8Array {
  return body(x, [
    nested(1, x, "resourceEntry", [
      resource(x, "claude-code"),
      nested(2, x, "scopeEntry", [
        scope(x, "com.anthropic.claude_code.events"),
        nested(2, x, "record", [
          (w) => w.tag(1, I64).fixed64(NS),
          (w) => w.tag(5, LEN).fork().tag(1, LEN).string("claude_code.tool_result").join(),
          stringAttribute(6, "session.id", "s1"),
          stringAttribute(6, "tool_name", "Bash"),
          stringAttribute(6, "tool_use_id", "u1"),
          nestedAttribute(6, x),
          (w) => w.tag(9, LEN).bytes(new Uint8Array(16).fill(1)),
          (w) => w.tag(10, LEN).bytes(new Uint8Array(8).fill(2)),
          (w) => w.tag(11, I64).fixed64(NS),
          text(12, "claude_code.tool_result"),
        ]),
      ]),
    ]),
  ]);
}

/** An ExportTraceServiceRequest of one GenAI `execute_tool` span. */
function tracesBody(x: Extras = {}): Uint8Array {
  return body(x, [
    nested(1, x, "resourceEntry", [
      resource(x, "my-agent"),
      nested(2, x, "scopeEntry", [
        scope(x, "agent"),
        nested(2, x, "record", [
          (w) => w.tag(1, LEN).bytes(new Uint8Array(16).fill(3)),
          (w) => w.tag(2, LEN).bytes(new Uint8Array(8).fill(4)),
          text(5, "execute_tool Bash"),
          (w) => w.tag(7, I64).fixed64(NS),
          (w) => w.tag(8, I64).fixed64(NS + 5_000_000n),
          stringAttribute(9, "gen_ai.operation.name", "execute_tool"),
          stringAttribute(9, "gen_ai.conversation.id", "s1"),
          stringAttribute(9, "gen_ai.tool.name", "Bash"),
          nestedAttribute(9, x),
          nested(15, x, "status", [text(2, "boom"), (w) => w.tag(3, VARINT).int32(2)]),
        ]),
      ]),
    ]),
  ]);
}

/** An ExportMetricsServiceRequest with one metric of each data kind. */
function metricsBody(x: Extras = {}): Uint8Array {
  const numberPoint = (value: number) =>
    nested(1, x, "numberPoint", [
      (w) => w.tag(2, I64).fixed64(NS),
      (w) => w.tag(3, I64).fixed64(NS + 1n),
      (w) => w.tag(6, I64).sfixed64(value),
      stringAttribute(7, "session.id", "s1"),
      (w) => w.tag(8, VARINT).uint32(0),
    ]);
  const metric = (name: string, data: Write) =>
    nested(2, x, "metric", [text(1, name), text(3, "1"), data]);
  return body(x, [
    nested(1, x, "resourceEntry", [
      resource(x, "claude-code"),
      nested(2, x, "scopeEntry", [
        scope(x, "com.anthropic.claude_code"),
        metric(
          "claude_code.session.count",
          nested(7, x, "sum", [
            numberPoint(1),
            (w) => w.tag(2, VARINT).int32(1),
            (w) => w.tag(3, VARINT).bool(true),
          ]),
        ),
        metric("g", nested(5, x, "gauge", [numberPoint(2)])),
        metric(
          "h",
          nested(9, x, "histogram", [
            nested(1, x, "histogramPoint", [
              (w) => w.tag(3, I64).fixed64(NS),
              (w) => w.tag(4, I64).fixed64(3),
              (w) => w.tag(5, I64).double(4.5),
              stringAttribute(9, "session.id", "s1"),
              (w) => w.tag(10, VARINT).uint32(0),
            ]),
            (w) => w.tag(2, VARINT).int32(2),
          ]),
        ),
        metric(
          "e",
          nested(10, x, "exponentialHistogram", [
            nested(1, {}, "histogramPoint", []),
            (w) => w.tag(2, VARINT).int32(2),
          ]),
        ),
        metric("q", nested(11, x, "summary", [nested(1, {}, "numberPoint", [])])),
      ]),
    ]),
  ]);
}

/** Writes field `field` with wire type `wireType` and a well-formed value of that type. */
function field(fieldNumber: number, wireType: WireType): (w: BinaryWriter) => void {
  return (w) => {
    w.tag(fieldNumber, wireType);
    if (wireType === VARINT) w.uint32(1);
    else if (wireType === I64) w.fixed64(1);
    else if (wireType === I32) w.fixed32(1);
    else w.bytes(new Uint8Array([1]));
  };
}

type Decoded = (x: Extras) => unknown;

const DECODERS: Record<"logs" | "traces" | "metrics", Decoded> = {
  logs: (x) => decodeExport(logsBody(x), { encoding: "protobuf", pathSignal: "logs" }),
  traces: (x) => decodeExport(tracesBody(x), { encoding: "protobuf", pathSignal: "traces" }),
  metrics: (x) => decodeMetrics(metricsBody(x), "protobuf"),
};

/** A field of a message with a wire type: `[signal, level, field, wire type]`. */
type FieldCase = readonly ["logs" | "traces" | "metrics", Level, number, WireType];

// ---------------------------------------------------------------------------
// Finding 1: a known field with the wrong wire type

Deno.test("finding 1: the body 08 b9 60 (resource_logs as a varint) is refused", () => {
  const bytes = new Uint8Array([0x08, 0xb9, 0x60]);
  for (const pathSignal of ["logs", "traces", "metrics"] as const) {
    assert.throws(
      () => decodeExport(bytes, { encoding: "protobuf", pathSignal }),
      (error: unknown) =>
        error instanceof OtlpDecodeError && /field 1 .*wire type 0/.test(error.message),
      pathSignal,
    );
  }
  assert.throws(() => decodeMetrics(bytes, "protobuf"), OtlpDecodeError);
  assert.throws(
    () => receiveExport(bytes, { encoding: "protobuf", pathSignal: "logs" }),
    OtlpDecodeError,
  );
});

Deno.test("finding 1: a known field with another wire type is refused in every message read", async (t) => {
  // Fields the decoders read, and fields they skip but the schema defines.
  const wrong: FieldCase[] = [
    ["logs", "request", 1, I64],
    ["logs", "resourceEntry", 1, VARINT],
    ["logs", "resourceEntry", 2, I32],
    ["logs", "resourceEntry", 3, VARINT], // schema_url
    ["logs", "resource", 1, VARINT],
    ["logs", "resource", 2, LEN], // dropped_attributes_count
    ["logs", "scopeEntry", 1, VARINT],
    ["logs", "scopeEntry", 2, I64],
    ["logs", "scope", 1, VARINT],
    ["logs", "scope", 2, VARINT], // version
    ["logs", "scope", 4, LEN], // dropped_attributes_count
    ["logs", "record", 1, VARINT], // time_unix_nano (fixed64)
    ["logs", "record", 2, LEN], // severity_number
    ["logs", "record", 5, VARINT], // body
    ["logs", "record", 6, I32], // attributes
    ["logs", "record", 8, VARINT], // flags (fixed32)
    ["logs", "record", 9, VARINT], // trace_id
    ["logs", "record", 10, I64], // span_id
    ["logs", "record", 11, I32], // observed_time_unix_nano
    ["logs", "record", 12, VARINT], // event_name
    ["logs", "keyValue", 1, VARINT],
    ["logs", "keyValue", 2, I64],
    ["logs", "anyValue", 1, VARINT], // string_value
    ["logs", "anyValue", 2, LEN], // bool_value
    ["logs", "anyValue", 3, I64], // int_value
    ["logs", "anyValue", 4, VARINT], // double_value
    ["logs", "anyValue", 5, VARINT], // array_value
    ["logs", "anyValue", 6, I32], // kvlist_value
    ["logs", "anyValue", 7, VARINT], // bytes_value
    ["logs", "kvlist", 1, VARINT],
    ["logs", "arrayValue", 1, I64],
    ["traces", "request", 1, VARINT],
    ["traces", "resourceEntry", 2, VARINT],
    ["traces", "record", 1, VARINT], // trace_id
    ["traces", "record", 5, VARINT], // name
    ["traces", "record", 6, LEN], // kind
    ["traces", "record", 7, VARINT], // start_time_unix_nano
    ["traces", "record", 9, VARINT], // attributes
    ["traces", "record", 15, VARINT], // status
    ["traces", "record", 16, VARINT], // flags (fixed32)
    ["traces", "status", 2, VARINT], // message
    ["traces", "status", 3, LEN], // code
    ["metrics", "request", 1, VARINT],
    ["metrics", "resourceEntry", 1, I64],
    ["metrics", "scopeEntry", 2, VARINT],
    ["metrics", "scope", 1, I32],
    ["metrics", "metric", 1, VARINT], // name
    ["metrics", "metric", 3, VARINT], // unit
    ["metrics", "metric", 5, VARINT], // gauge
    ["metrics", "metric", 7, I64], // sum
    ["metrics", "metric", 12, VARINT], // metadata
    ["metrics", "gauge", 1, VARINT],
    ["metrics", "sum", 1, VARINT],
    ["metrics", "sum", 2, LEN], // aggregation_temporality
    ["metrics", "sum", 3, I64], // is_monotonic
    ["metrics", "histogram", 2, LEN],
    ["metrics", "exponentialHistogram", 1, VARINT],
    ["metrics", "summary", 1, VARINT],
    ["metrics", "numberPoint", 3, VARINT], // time_unix_nano
    ["metrics", "numberPoint", 4, VARINT], // as_double
    ["metrics", "numberPoint", 6, VARINT], // as_int
    ["metrics", "numberPoint", 7, VARINT], // attributes
    ["metrics", "numberPoint", 8, LEN], // flags
    ["metrics", "histogramPoint", 4, VARINT], // count
    ["metrics", "histogramPoint", 5, VARINT], // sum
    ["metrics", "histogramPoint", 6, VARINT], // bucket_counts: packed or fixed64, not varint
    ["metrics", "histogramPoint", 10, I64], // flags
  ];
  for (const [signal, level, number, wireType] of wrong) {
    await t.step(`${signal}: ${level} field ${number} as wire type ${wireType}`, () => {
      assert.throws(
        () => DECODERS[signal]({ [level]: field(number, wireType) }),
        (error: unknown) =>
          error instanceof OtlpDecodeError &&
          new RegExp(`field ${number} .*wire type ${wireType}`).test(error.message),
      );
    });
  }
});

Deno.test("finding 1: unknown fields of any wire type, and known ones of their own, still decode", async (t) => {
  const unknown = (w: BinaryWriter) => {
    w.tag(999, VARINT).uint32(7);
    w.tag(998, I64).fixed64(7);
    w.tag(997, LEN).bytes(new Uint8Array([7]));
    w.tag(996, I32).fixed32(7);
    w.tag(995, WireType.StartGroup).tag(1, VARINT).uint32(1).tag(995, WireType.EndGroup);
  };
  const levels: Record<"logs" | "traces" | "metrics", Level[]> = {
    logs: [
      "request",
      "resourceEntry",
      "resource",
      "scopeEntry",
      "scope",
      "record",
      "keyValue",
      "anyValue",
      "kvlist",
      "arrayValue",
    ],
    traces: ["request", "resourceEntry", "resource", "scopeEntry", "scope", "record", "status"],
    metrics: [
      "request",
      "resourceEntry",
      "scopeEntry",
      "metric",
      "gauge",
      "sum",
      "histogram",
      "exponentialHistogram",
      "summary",
      "numberPoint",
      "histogramPoint",
    ],
  };
  for (const [signal, signalLevels] of Object.entries(levels)) {
    const decode = DECODERS[signal as Signal];
    const expected = decode({});
    for (const level of signalLevels) {
      await t.step(`${signal}: unknown fields in ${level}`, () => {
        assert.deepEqual(decode({ [level]: unknown }), expected);
      });
    }
  }
  // Fields the schema defines that the decoders do not read, in their own wire types.
  const own: FieldCase[] = [
    ["logs", "resourceEntry", 3, LEN], // schema_url
    ["logs", "resource", 2, VARINT], // dropped_attributes_count
    ["logs", "resource", 3, LEN], // entity_refs
    ["logs", "scope", 2, LEN], // version
    ["logs", "scope", 3, LEN], // attributes
    ["logs", "scope", 4, VARINT], // dropped_attributes_count
    ["logs", "record", 2, VARINT], // severity_number
    ["logs", "record", 3, LEN], // severity_text
    ["logs", "record", 4, VARINT], // reserved: unknown
    ["logs", "record", 7, VARINT], // dropped_attributes_count
    ["logs", "record", 8, I32], // flags
    ["logs", "keyValue", 3, VARINT], // key_strindex
    ["traces", "record", 3, LEN], // trace_state
    ["traces", "record", 4, LEN], // parent_span_id
    ["traces", "record", 6, VARINT], // kind
    ["traces", "record", 10, VARINT], // dropped_attributes_count
    ["traces", "record", 11, LEN], // events
    ["traces", "record", 13, LEN], // links
    ["traces", "record", 16, I32], // flags
    ["traces", "status", 1, VARINT], // reserved (the old deprecated_code): unknown
    ["metrics", "metric", 2, LEN], // description
    ["metrics", "metric", 12, LEN], // metadata
    ["metrics", "gauge", 2, VARINT], // not Gauge's: unknown
    ["metrics", "numberPoint", 5, LEN], // exemplars
    ["metrics", "histogramPoint", 6, LEN], // bucket_counts, packed
    ["metrics", "histogramPoint", 6, I64], // bucket_counts, one by one
    ["metrics", "histogramPoint", 7, LEN], // explicit_bounds, packed
    ["metrics", "histogramPoint", 7, I64], // explicit_bounds, one by one
    ["metrics", "histogramPoint", 8, LEN], // exemplars
    ["metrics", "histogramPoint", 11, I64], // min
    ["metrics", "histogramPoint", 12, I64], // max
  ];
  for (const [signal, level, number, wireType] of own) {
    await t.step(`${signal}: ${level} field ${number} in wire type ${wireType}`, () => {
      assert.deepEqual(
        DECODERS[signal]({ [level]: field(number, wireType) }),
        DECODERS[signal]({}),
      );
    });
  }
});

// ---------------------------------------------------------------------------
// Finding 2: varints longer than 10 bytes, tags and lengths beyond 32 bits

/** The value 1 as a varint of `length` (≥ 2) bytes: continuation bytes pad it. */
function paddedOne(length: number): number[] {
  return [0x81, ...new Array(length - 2).fill(0x80), 0x00];
}

Deno.test("finding 2: an 11-byte varint is refused; 10 bytes decode", async (t) => {
  // Field 15 (unknown to every export request) as a varint.
  const unknownVarint = (length: number) => new Uint8Array([0x78, ...paddedOne(length)]);
  await t.step("in an unknown field of the request", () => {
    for (const pathSignal of ["logs", "traces", "metrics"] as const) {
      assert.deepEqual(
        decodeExport(unknownVarint(10), { encoding: "protobuf", pathSignal }).records,
        [],
      );
      assert.throws(
        () => decodeExport(unknownVarint(11), { encoding: "protobuf", pathSignal }),
        (error: unknown) => error instanceof OtlpDecodeError && /10 bytes/.test(error.message),
        pathSignal,
      );
    }
    assert.deepEqual(decodeMetrics(unknownVarint(10), "protobuf").points, []);
    assert.throws(() => decodeMetrics(unknownVarint(11), "protobuf"), OtlpDecodeError);
  });
  const varintOf = (field: number, length: number) => (w: BinaryWriter) =>
    w.tag(field, VARINT).raw(new Uint8Array(paddedOne(length)));
  const cases: [string, "logs" | "traces" | "metrics", Level, number][] = [
    ["a skipped known field (severity_number)", "logs", "record", 2],
    ["an unknown field of a log record", "logs", "record", 99],
    ["an unknown field of an attribute value", "logs", "anyValue", 99],
    ["an AnyValue int", "logs", "anyValue", 3],
    ["an AnyValue bool", "logs", "anyValue", 2],
    ["a span status code", "traces", "status", 3],
    ["a sum's temporality", "metrics", "sum", 2],
    ["a data point's flags", "metrics", "numberPoint", 8],
    ["an unknown field of a metric", "metrics", "metric", 99],
  ];
  for (const [name, signal, level, number] of cases) {
    await t.step(name, () => {
      DECODERS[signal]({ [level]: varintOf(number, 10) });
      assert.throws(() => DECODERS[signal]({ [level]: varintOf(number, 11) }), OtlpDecodeError);
    });
  }
  await t.step("inside a group of an unknown field", () => {
    const group = (length: number) => (w: BinaryWriter) =>
      w.tag(99, WireType.StartGroup).tag(1, VARINT).raw(new Uint8Array(paddedOne(length)))
        .tag(99, WireType.EndGroup);
    DECODERS.logs({ record: group(10) });
    assert.throws(() => DECODERS.logs({ record: group(11) }), OtlpDecodeError);
  });
});

Deno.test("finding 2: a tag or a length beyond 32 bits is refused, not truncated", () => {
  const decode = (bytes: number[]) =>
    decodeExport(new Uint8Array(bytes), { encoding: "protobuf", pathSignal: "logs" });
  // Tag 0x78 (field 15, varint) padded to 5 bytes: the same tag.
  assert.deepEqual(decode([0xf8, 0x80, 0x80, 0x80, 0x00, 0x01]).records, []);
  // The same with bit 32 set: uint32 would drop it and read field 15.
  assert.throws(() => decode([0xf8, 0x80, 0x80, 0x80, 0x10, 0x01]), OtlpDecodeError);
  // resource_logs of length 2^32: uint32 would read an empty message.
  assert.throws(() => decode([0x0a, 0x80, 0x80, 0x80, 0x80, 0x10]), OtlpDecodeError);
  // A length padded to 5 bytes is the same length.
  assert.deepEqual(decode([0x0a, 0x80, 0x80, 0x80, 0x80, 0x00]).records, []);
});

// ---------------------------------------------------------------------------
// Finding 3: arrays and kvlists where a string is read

type JsonRecord = { attributes: { key: string; value: unknown }[] };

/** The record with attribute `key` set to the AnyValue `value` (replacing any of that key). */
function withValue<T extends JsonRecord>(record: T, key: string, value: unknown): T {
  return {
    ...record,
    attributes: [...record.attributes.filter((a) => a.key !== key), { key, value }],
  };
}

const KVLIST = { kvlistValue: { values: [{ key: "a", value: { intValue: "1" } }] } };
const ARRAY = { arrayValue: { values: [{ stringValue: "a" }, { intValue: "1" }] } };

function receiveJson(body: unknown, pathSignal: Signal = "logs") {
  return receiveExport(encoder.encode(JSON.stringify(body)), { encoding: "json", pathSignal });
}

const call = (id = "u1") => toolResult({ session: "s1", id, tool: "Bash", timeMs: T0 });

Deno.test("finding 3: a session id or tool name sent as a kvlist or an array makes the record unusable", async (t) => {
  const cases: [string, JsonRecord, RegExp][] = [
    [
      "session.id as a kvlist",
      withValue(call(), "session.id", KVLIST),
      /^Session id is not a string/,
    ],
    [
      "session.id as an array",
      withValue(call(), "session.id", ARRAY),
      /^Session id is not a string/,
    ],
    ["tool_name as a kvlist", withValue(call(), "tool_name", KVLIST), /^Tool name is not a string/],
    ["tool_name as an array", withValue(call(), "tool_name", ARRAY), /^Tool name is not a string/],
    [
      "an api_request's session.id as a kvlist",
      withValue(
        apiRequest({ session: "s1", timeMs: T0, model: "m", requestId: "r" }),
        "session.id",
        KVLIST,
      ),
      /^Session id is not a string/,
    ],
  ];
  for (const [name, record, reason] of cases) {
    await t.step(name, () => {
      const received = receiveJson(claudeExport([call("ok"), record]));
      assert.equal(received.unusable, 1);
      assert.match(received.firstReason, reason);
      assert.deepEqual(received.events.map((e) => e.sessionId), ["s1"]);
    });
  }
  await t.step("a GenAI span's conversation id as a kvlist", () => {
    const span = {
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "00000000000000a1",
      name: "execute_tool Bash",
      startTimeUnixNano: `${NS}`,
      endTimeUnixNano: `${NS + 1_000_000n}`,
      attributes: [
        { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
        { key: "gen_ai.conversation.id", value: KVLIST },
        { key: "gen_ai.tool.name", value: { stringValue: "Bash" } },
      ],
    };
    const received = receiveJson(
      { resourceSpans: [{ resource: {}, scopeSpans: [{ spans: [span] }] }] },
      "traces",
    );
    assert.equal(received.unusable, 1);
    assert.match(received.firstReason, /^Session id is not a string/);
  });
});

Deno.test("finding 3: any other text field sent as a kvlist or an array is absent", () => {
  let record = call();
  record = withValue(record, "tool_use_id", KVLIST);
  record = withValue(record, "prompt.id", ARRAY);
  record = withValue(record, "terminal.type", KVLIST);
  record = withValue(record, "decision_type", ARRAY);
  record = withValue(record, "mcp_server_scope", KVLIST);
  const model = withValue(
    withValue(
      apiRequest({ session: "s1", timeMs: T0, model: "m", requestId: "r" }),
      "model",
      KVLIST,
    ),
    "request_id",
    ARRAY,
  );
  const received = receiveJson(claudeExport([record, model]));
  assert.equal(received.unusable, 0, received.firstReason);
  const [toolCall, modelCall] = received.events as [ToolCallEvent, ModelCallEvent];
  assert.equal(toolCall.toolCallId, undefined);
  assert.equal(toolCall.promptId, undefined);
  assert.equal(toolCall.terminalType, undefined);
  assert.equal(toolCall.decision, undefined);
  assert.equal(toolCall.mcpServerScope, undefined);
  assert.equal(toolCall.toolType, "builtin");
  assert.doesNotMatch(toolCall.identity, /\{/);
  assert.equal(modelCall.model, "");
  assert.doesNotMatch(modelCall.identity, /\[|\{/);
});

Deno.test("finding 3: scalars stay identifiers, and a non-scalar attribute falls back like an absent one", () => {
  const received = receiveJson(claudeExport([
    withValue(call("int"), "session.id", { intValue: "42" }),
    withValue(call("bool"), "session.id", { boolValue: true }),
    withValue(call("bytes"), "session.id", { bytesValue: "AQI=" }),
  ]));
  assert.equal(received.unusable, 0, received.firstReason);
  assert.deepEqual(received.events.map((e) => e.sessionId), ["42", "true", "0102"]);
  // `session.id` is also read from the resource when the record has none usable.
  const body = claudeExport([withValue(call(), "session.id", KVLIST)]);
  body.resourceLogs[0]!.resource.attributes.push({
    key: "session.id",
    value: { stringValue: "from-resource" },
  });
  const fallback = receiveJson(body);
  assert.equal(fallback.unusable, 0, fallback.firstReason);
  assert.deepEqual(fallback.events.map((e) => e.sessionId), ["from-resource"]);
});

// ---------------------------------------------------------------------------
// Finding 4: NaN and infinities

Deno.test("finding 4: NaN and infinities where a number is read reject the record alike", async (t) => {
  const model = (value: unknown) =>
    withValue(
      apiRequest({ session: "s1", timeMs: T0, model: "m", requestId: "r" }),
      "cost_usd",
      value,
    );
  const duration = (value: unknown) => withValue(call(), "duration_ms", value);
  const tokens = (value: unknown) =>
    withValue(
      apiRequest({ session: "s1", timeMs: T0, model: "m", requestId: "r" }),
      "output_tokens",
      value,
    );
  const values: unknown[] = [
    { stringValue: "NaN" },
    { stringValue: "Infinity" },
    { stringValue: "-Infinity" },
    { stringValue: " nan " },
    { stringValue: "-NaN" },
    { stringValue: "inf" },
    { stringValue: "-inf" },
    { stringValue: "+Inf" },
    { stringValue: "infinity" },
    { stringValue: "1e999" },
    { doubleValue: "NaN" },
    { doubleValue: "Infinity" },
    { doubleValue: "-Infinity" },
  ];
  for (
    const [name, build] of [["cost_usd", model], ["duration_ms", duration], [
      "output_tokens",
      tokens,
    ]] as const
  ) {
    for (const value of values) {
      await t.step(`${name} ${JSON.stringify(value)}`, () => {
        const received = receiveJson(claudeExport([build(value)]));
        assert.equal(received.events.length, 0, JSON.stringify(received.events));
        assert.equal(received.unusable, 1);
        assert.match(received.firstReason, /^A number out of range: /);
      });
    }
  }
  await t.step("text that is no number stays absent", () => {
    for (const value of ["", "abc", "nano", "information"]) {
      const received = receiveJson(claudeExport([model({ stringValue: value })]));
      assert.equal(received.unusable, 0, `${value}: ${received.firstReason}`);
      assert.equal((received.events[0] as ModelCallEvent).costUsd, null);
    }
  });
});

Deno.test("finding 4: a NaN or infinite double read as a boolean or a text is absent", () => {
  const received = receiveJson(claudeExport([
    withValue(withValue(call("a"), "success", { doubleValue: "NaN" }), "error", {
      stringValue: "boom",
    }),
    withValue(call("b"), "terminal.type", { doubleValue: "Infinity" }),
  ]));
  assert.equal(received.unusable, 0, received.firstReason);
  const [failed, ok] = received.events as ToolCallEvent[];
  // No `success` to read: the error text decides.
  assert.equal(failed!.outcome, "error");
  assert.equal(ok!.terminalType, undefined);
});

// ---------------------------------------------------------------------------
// Through a real server

engineTest(
  "strict decoding through the server: 400 for a wrong wire type, partialSuccess for a non-scalar session id",
  async (t) => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    await t.step("08 b9 60 as protobuf → 400", async () => {
      for (const path of ["/v1/logs", "/v1/traces", "/v1/metrics"]) {
        const response = await fetch(server.ingestUrl + path, {
          method: "POST",
          headers: {
            "content-type": "application/x-protobuf",
            authorization: `Bearer ${org.ingestKey}`,
          },
          body: new Uint8Array([0x08, 0xb9, 0x60]),
        });
        await response.body?.cancel();
        assert.equal(response.status, 400, path);
      }
    });
    await t.step("an 11-byte varint → 400", async () => {
      const response = await fetch(server.ingestUrl + "/v1/logs", {
        method: "POST",
        headers: {
          "content-type": "application/x-protobuf",
          authorization: `Bearer ${org.ingestKey}`,
        },
        body: new Uint8Array([0x78, ...paddedOne(11)]),
      });
      await response.body?.cancel();
      assert.equal(response.status, 400);
    });
    await t.step("kvlist session id and array tool name → counted in partialSuccess", async () => {
      const response = await server.ingest(
        "/v1/logs",
        claudeExport([
          call("good"),
          withValue(call("kv"), "session.id", KVLIST),
          withValue(call("arr"), "tool_name", ARRAY),
          apiRequest({ session: "s1", timeMs: T0, model: "m", requestId: "r", costUsd: NaN }),
        ]),
        org.ingestKey,
      );
      assert.equal(response.status, 200);
      const answer = await response.json();
      assert.equal(answer.partialSuccess.rejectedLogRecords, 3);
      assert.match(
        answer.partialSuccess.errorMessage,
        /^3 unusable record\(s\): Session id is not a string/,
      );
      const calls = await server.getJson("/v1/tool-calls", org.apiKey);
      assert.equal(calls.status, 200);
      assert.deepEqual(
        calls.body.data.map((c: { session_id: string }) => c.session_id),
        ["s1"],
      );
      const sessions = await server.getJson("/v1/sessions", org.apiKey);
      assert.deepEqual(
        sessions.body.data.map((s: { session_id: string }) => s.session_id),
        ["s1"],
      );
    });
  },
);

Deno.test("a metric point's non-scalar session id is absent: the resource's answers, as for logs", () => {
  const body = new TextEncoder().encode(JSON.stringify({
    resourceMetrics: [{
      resource: {
        attributes: [
          { key: "service.name", value: { stringValue: "claude-code" } },
          { key: "session.id", value: { stringValue: "from-resource" } },
        ],
      },
      scopeMetrics: [{
        scope: { name: "com.anthropic.claude_code" },
        metrics: [{
          name: "claude_code.lines_of_code.count",
          sum: {
            aggregationTemporality: 1,
            isMonotonic: true,
            dataPoints: [{
              timeUnixNano: "1795168800000000000",
              asInt: "3",
              attributes: [
                {
                  key: "session.id",
                  value: { kvlistValue: { values: [{ key: "a", value: { intValue: "1" } }] } },
                },
                { key: "type", value: { stringValue: "added" } },
              ],
            }],
          },
        }],
      }],
    }],
  }));
  const received = receiveMetrics(decodeMetrics(body, "json"));
  assert.deepEqual(received.samples.map((sample) => sample.sessionId), ["from-resource"]);
});
