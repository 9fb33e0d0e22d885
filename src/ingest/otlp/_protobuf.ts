import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import type { Attributes, AttributeValue, OtlpRecord } from "../types.ts";
import { hexOf, idHexOf } from "./_hex.ts";
import { eventNameOf, MAX_VALUE_DEPTH, setAttribute } from "./_record.ts";
import type { Signal } from "./_types.ts";

/**
 * Recently decoded short ASCII strings (attribute keys, and values such as
 * `"true"`, tool names and session ids repeat in every record), kept in a
 * direct-mapped table by hash. Reusing them saves building a string per field
 * and gives property keys that are already internalised.
 */
const STRING_SLOTS = 4096;
const STRING_MAX_BYTES = 64;
const recentStrings: (string | undefined)[] = new Array(STRING_SLOTS).fill(undefined);

// A leading U+FEFF in a protobuf string is text, not a byte-order mark.
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** A field's tag as it appears on the wire: field number and wire type. */
function tag(field: number, wireType: WireType): number {
  return (field << 3) | wireType;
}

const LEN = WireType.LengthDelimited;
const I64 = WireType.Bit64;
const VARINT = WireType.Varint;

// The first two length-delimited fields of several messages:
// 1: Export*ServiceRequest.resource_*, Resource.attributes, InstrumentationScope.name,
//    KeyValue.key, ArrayValue.values, KeyValueList.values;
// 2: Resource{Logs,Spans}.scope_*, Scope{Logs,Spans}.log_records/spans, KeyValue.value.
const FIRST_LEN = tag(1, LEN);
const SECOND_LEN = tag(2, LEN);

const LOG_TIME = tag(1, I64);
const LOG_BODY = tag(5, LEN);
const LOG_ATTRIBUTES = tag(6, LEN);
const LOG_TRACE_ID = tag(9, LEN);
const LOG_SPAN_ID = tag(10, LEN);
const LOG_OBSERVED_TIME = tag(11, I64);
const LOG_EVENT_NAME = tag(12, LEN);

const SPAN_TRACE_ID = tag(1, LEN);
const SPAN_SPAN_ID = tag(2, LEN);
const SPAN_NAME = tag(5, LEN);
const SPAN_START_TIME = tag(7, I64);
const SPAN_END_TIME = tag(8, I64);
const SPAN_ATTRIBUTES = tag(9, LEN);
const SPAN_STATUS = tag(15, LEN);
const STATUS_MESSAGE = tag(2, LEN);
const STATUS_CODE = tag(3, VARINT);

const ANY_STRING = tag(1, LEN);
const ANY_BOOL = tag(2, VARINT);
const ANY_INT = tag(3, VARINT);
const ANY_DOUBLE = tag(4, I64);
const ANY_ARRAY = tag(5, LEN);
const ANY_KVLIST = tag(6, LEN);
const ANY_BYTES = tag(7, LEN);

/**
 * Decodes a protobuf `ExportLogsServiceRequest` or `ExportTraceServiceRequest`
 * into records; a metrics request is only checked for framing. Throws plain
 * errors on malformed input, which the caller turns into `OtlpDecodeError`.
 */
export function decodeProtobuf(bytes: Uint8Array, signal: Signal): OtlpRecord[] {
  const decoder = new ProtobufDecoder(bytes);
  if (signal === "logs") decoder.exportRequest(decoder.resourceLogs);
  else if (signal === "traces") decoder.exportRequest(decoder.resourceSpans);
  else decoder.exportRequest(decoder.skipMessage);
  return decoder.records;
}

/** One pass over one request, appending records as they are read. */
class ProtobufDecoder {
  readonly records: OtlpRecord[] = [];
  private readonly reader: BinaryReader;

  constructor(private readonly bytes: Uint8Array) {
    this.reader = new BinaryReader(bytes);
  }

  exportRequest(resourceEntry: (this: ProtobufDecoder, end: number) => void): void {
    const reader = this.reader;
    const end = reader.len;
    while (reader.pos < end) {
      const key = reader.uint32();
      if (key === FIRST_LEN) resourceEntry.call(this, this.messageEnd());
      else this.skip(key);
    }
    this.expectEnd(end);
  }

  /** `ResourceLogs`: resource (1), scope_logs (2). */
  resourceLogs(end: number): void {
    const reader = this.reader;
    // Filled in place, so records read before a late `resource` field still share it.
    const resource: Attributes = {};
    while (reader.pos < end) {
      const key = reader.uint32();
      if (key === FIRST_LEN) this.resource(this.messageEnd(), resource);
      else if (key === SECOND_LEN) this.scopeEntries(this.messageEnd(), resource, this.logRecord);
      else this.skip(key);
    }
    this.expectEnd(end);
  }

  /** `ResourceSpans`: resource (1), scope_spans (2). */
  resourceSpans(end: number): void {
    const reader = this.reader;
    const resource: Attributes = {};
    while (reader.pos < end) {
      const key = reader.uint32();
      if (key === FIRST_LEN) this.resource(this.messageEnd(), resource);
      else if (key === SECOND_LEN) this.scopeEntries(this.messageEnd(), resource, this.span);
      else this.skip(key);
    }
    this.expectEnd(end);
  }

  skipMessage(end: number): void {
    this.reader.pos = end;
  }

  /** `Resource`: attributes (1). */
  private resource(end: number, into: Attributes): void {
    const reader = this.reader;
    while (reader.pos < end) {
      const key = reader.uint32();
      if (key === FIRST_LEN) this.keyValue(this.messageEnd(), into, 0);
      else this.skip(key);
    }
    this.expectEnd(end);
  }

  /** `ScopeLogs` / `ScopeSpans`: scope (1), log_records / spans (2). */
  private scopeEntries(
    end: number,
    resource: Attributes,
    entry: (this: ProtobufDecoder, end: number, resource: Attributes, scopeName: string) => void,
  ): void {
    const reader = this.reader;
    const first = this.records.length;
    let scopeName = "";
    let scopeLate = false;
    while (reader.pos < end) {
      const key = reader.uint32();
      if (key === SECOND_LEN) entry.call(this, this.messageEnd(), resource, scopeName);
      else if (key === FIRST_LEN) {
        scopeName = this.scopeName(this.messageEnd());
        scopeLate = this.records.length > first;
      } else this.skip(key);
    }
    this.expectEnd(end);
    if (scopeLate) {
      for (let i = first; i < this.records.length; i++) this.records[i]!.scopeName = scopeName;
    }
  }

  /** `InstrumentationScope`: name (1). */
  private scopeName(end: number): string {
    const reader = this.reader;
    let name = "";
    while (reader.pos < end) {
      const key = reader.uint32();
      if (key === FIRST_LEN) name = this.string();
      else this.skip(key);
    }
    this.expectEnd(end);
    return name;
  }

  private logRecord(end: number, resource: Attributes, scopeName: string): void {
    const reader = this.reader;
    const attributes: Attributes = {};
    let timeUnixNano: bigint | null = null;
    let observedTimeUnixNano: bigint | null = null;
    let body: AttributeValue = null;
    let traceId = "";
    let spanId = "";
    let eventName = "";
    while (reader.pos < end) {
      const key = reader.uint32();
      switch (key) {
        case LOG_ATTRIBUTES:
          this.keyValue(this.messageEnd(), attributes, 0);
          break;
        case LOG_TIME:
          timeUnixNano = this.time();
          break;
        case LOG_OBSERVED_TIME:
          observedTimeUnixNano = this.time();
          break;
        case LOG_BODY:
          body = this.anyValue(this.messageEnd(), 0);
          break;
        case LOG_TRACE_ID:
          traceId = this.id();
          break;
        case LOG_SPAN_ID:
          spanId = this.id();
          break;
        case LOG_EVENT_NAME:
          eventName = this.string();
          break;
        default:
          this.skip(key);
      }
    }
    this.expectEnd(end);
    this.records.push({
      signal: "logs",
      resource,
      scopeName,
      eventName: eventNameOf(eventName, attributes, body),
      attributes,
      body,
      timeUnixNano,
      observedTimeUnixNano,
      traceId,
      spanId,
      statusCode: null,
      statusMessage: "",
      index: this.records.length,
    });
  }

  private span(end: number, resource: Attributes, scopeName: string): void {
    const reader = this.reader;
    const attributes: Attributes = {};
    let timeUnixNano: bigint | null = null;
    let observedTimeUnixNano: bigint | null = null;
    let traceId = "";
    let spanId = "";
    let name = "";
    let statusCode = 0;
    let statusMessage = "";
    while (reader.pos < end) {
      const key = reader.uint32();
      switch (key) {
        case SPAN_ATTRIBUTES:
          this.keyValue(this.messageEnd(), attributes, 0);
          break;
        case SPAN_TRACE_ID:
          traceId = this.id();
          break;
        case SPAN_SPAN_ID:
          spanId = this.id();
          break;
        case SPAN_NAME:
          name = this.string();
          break;
        case SPAN_START_TIME:
          timeUnixNano = this.time();
          break;
        case SPAN_END_TIME:
          observedTimeUnixNano = this.time();
          break;
        case SPAN_STATUS: {
          const statusEnd = this.messageEnd();
          while (reader.pos < statusEnd) {
            const statusKey = reader.uint32();
            if (statusKey === STATUS_CODE) statusCode = reader.int32();
            else if (statusKey === STATUS_MESSAGE) statusMessage = this.string();
            else this.skip(statusKey);
          }
          this.expectEnd(statusEnd);
          break;
        }
        default:
          this.skip(key);
      }
    }
    this.expectEnd(end);
    this.records.push({
      signal: "traces",
      resource,
      scopeName,
      eventName: name,
      attributes,
      body: null,
      timeUnixNano,
      observedTimeUnixNano,
      traceId,
      spanId,
      statusCode,
      statusMessage,
      index: this.records.length,
    });
  }

  /** `KeyValue`: key (1), value (2), stored into `into`. */
  private keyValue(end: number, into: Attributes, depth: number): void {
    const reader = this.reader;
    let name = "";
    let value: AttributeValue = null;
    while (reader.pos < end) {
      const key = reader.uint32();
      if (key === FIRST_LEN) name = this.string();
      else if (key === SECOND_LEN) value = this.anyValue(this.messageEnd(), depth);
      else this.skip(key);
    }
    this.expectEnd(end);
    setAttribute(into, name, value);
  }

  /** `AnyValue`: one of string, bool, int, double, array, kvlist, bytes; null when unset. */
  private anyValue(end: number, depth: number): AttributeValue {
    const reader = this.reader;
    let value: AttributeValue = null;
    while (reader.pos < end) {
      const key = reader.uint32();
      switch (key) {
        case ANY_STRING:
          value = this.string();
          break;
        case ANY_INT:
          value = this.int64();
          break;
        case ANY_BOOL:
          value = reader.bool();
          break;
        case ANY_DOUBLE:
          value = reader.double();
          break;
        case ANY_ARRAY:
          value = this.arrayValue(this.messageEnd(), depth + 1);
          break;
        case ANY_KVLIST:
          value = this.keyValueList(this.messageEnd(), depth + 1);
          break;
        case ANY_BYTES: {
          const bytesEnd = this.messageEnd();
          value = hexOf(this.bytes, reader.pos, bytesEnd);
          reader.pos = bytesEnd;
          break;
        }
        default:
          this.skip(key);
      }
    }
    this.expectEnd(end);
    return value;
  }

  /** `ArrayValue`: values (1). */
  private arrayValue(end: number, depth: number): AttributeValue[] {
    if (depth > MAX_VALUE_DEPTH) throw new Error(`values nested deeper than ${MAX_VALUE_DEPTH}`);
    const reader = this.reader;
    const values: AttributeValue[] = [];
    while (reader.pos < end) {
      const key = reader.uint32();
      if (key === FIRST_LEN) values.push(this.anyValue(this.messageEnd(), depth));
      else this.skip(key);
    }
    this.expectEnd(end);
    return values;
  }

  /** `KeyValueList`: values (1). */
  private keyValueList(end: number, depth: number): Attributes {
    if (depth > MAX_VALUE_DEPTH) throw new Error(`values nested deeper than ${MAX_VALUE_DEPTH}`);
    const reader = this.reader;
    const values: Attributes = {};
    while (reader.pos < end) {
      const key = reader.uint32();
      if (key === FIRST_LEN) this.keyValue(this.messageEnd(), values, depth);
      else this.skip(key);
    }
    this.expectEnd(end);
    return values;
  }

  /** An int64 varint: a number when safe, else the integer's decimal string. */
  private int64(): number | string {
    const bytes = this.bytes;
    const reader = this.reader;
    // Fast path: non-negative values of up to 7 varint bytes (< 2^49) need no bigint.
    let pos = reader.pos;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 7 && pos < bytes.length; i++) {
      const byte = bytes[pos++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        reader.pos = pos;
        return value;
      }
      scale *= 128;
    }
    const big = BigInt(reader.int64());
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(big)
      : big.toString();
  }

  /** A fixed64 nanosecond time; null when 0. */
  private time(): bigint | null {
    const value = this.reader.fixed64();
    const time = typeof value === "bigint" ? value : BigInt(value);
    return time === 0n ? null : time;
  }

  /** A trace or span id as lower-case hex; `""` when empty or all zero. */
  private id(): string {
    const end = this.messageEnd();
    const id = idHexOf(this.bytes, this.reader.pos, end);
    this.reader.pos = end;
    return id;
  }

  /** A string field: UTF-8, invalid sequences replaced (as protobuf-es does). */
  private string(): string {
    const bytes = this.bytes;
    const end = this.messageEnd();
    const start = this.reader.pos;
    this.reader.pos = end;
    const length = end - start;
    if (length > STRING_MAX_BYTES) return utf8.decode(bytes.subarray(start, end));
    let hash = 0x811c9dc5;
    let high = 0;
    for (let i = start; i < end; i++) {
      const byte = bytes[i]!;
      high |= byte;
      hash = Math.imul(hash ^ byte, 0x01000193);
    }
    if (high > 0x7f) return utf8.decode(bytes.subarray(start, end));
    const slot = (hash ^ (hash >>> 16)) & (STRING_SLOTS - 1);
    const recent = recentStrings[slot];
    if (recent !== undefined && recent.length === length) {
      let i = 0;
      while (i < length && recent.charCodeAt(i) === bytes[start + i]) i++;
      if (i === length) return recent;
    }
    const codes: number[] = new Array(length);
    for (let i = 0; i < length; i++) codes[i] = bytes[start + i]!;
    const text = String.fromCharCode.apply(null, codes);
    recentStrings[slot] = text;
    return text;
  }

  /** Reads a length prefix and returns where the value ends. */
  private messageEnd(): number {
    const reader = this.reader;
    const length = reader.uint32();
    const end = reader.pos + length;
    if (end > reader.len) throw new Error("length-delimited field runs past the end of the body");
    return end;
  }

  private expectEnd(end: number): void {
    if (this.reader.pos !== end) throw new Error("field runs past the end of its message");
  }

  private skip(key: number): void {
    const field = key >>> 3;
    if (field === 0) throw new Error("invalid field number 0");
    this.reader.skip(key & 7, field);
  }
}
