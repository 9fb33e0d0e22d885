/**
 * The protobuf wire reading shared by the OTLP decoders of logs and traces
 * (`_protobuf.ts`) and of metrics (`../metrics/_decode_protobuf.ts`):
 * attributes and `AnyValue`s, strings, ids, times, framing. Throws plain
 * errors on malformed input, which the callers turn into `OtlpDecodeError`.
 *
 * @module
 */
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import type { Attributes, AttributeValue } from "../types.ts";
import { hexOf, idHexOf } from "./_hex.ts";
import { MAX_VALUE_DEPTH, setAttribute } from "./_record.ts";

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
export function tag(field: number, wireType: WireType): number {
  return (field << 3) | wireType;
}

export const LEN = WireType.LengthDelimited;
export const I64 = WireType.Bit64;
export const VARINT = WireType.Varint;

// The first two length-delimited fields of several messages:
// 1: Export*ServiceRequest.resource_*, Resource.attributes, InstrumentationScope.name,
//    KeyValue.key, ArrayValue.values, KeyValueList.values;
// 2: Resource*.scope_*, Scope*.log_records/spans/metrics, KeyValue.value.
export const FIRST_LEN = tag(1, LEN);
export const SECOND_LEN = tag(2, LEN);

const ANY_STRING = tag(1, LEN);
const ANY_BOOL = tag(2, VARINT);
const ANY_INT = tag(3, VARINT);
const ANY_DOUBLE = tag(4, I64);
const ANY_ARRAY = tag(5, LEN);
const ANY_KVLIST = tag(6, LEN);
const ANY_BYTES = tag(7, LEN);

/** A reader over one request body; decoders extend it with their messages. */
export class OtlpWireReader {
  protected readonly reader: BinaryReader;

  constructor(protected readonly bytes: Uint8Array) {
    this.reader = new BinaryReader(bytes);
  }

  /** A list of `KeyValue`s in field 1 (`Resource.attributes`) into `into`. */
  protected attributeList(end: number, into: Attributes): void {
    const reader = this.reader;
    while (reader.pos < end) {
      const key = reader.uint32();
      if (key === FIRST_LEN) this.keyValue(this.messageEnd(), into, 0);
      else this.skip(key);
    }
    this.expectEnd(end);
  }

  /** `InstrumentationScope`: name (1). */
  protected scopeName(end: number): string {
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

  /** `KeyValue`: key (1), value (2), stored into `into`. */
  protected keyValue(end: number, into: Attributes, depth: number): void {
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
  protected anyValue(end: number, depth: number): AttributeValue {
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
  protected arrayValue(end: number, depth: number): AttributeValue[] {
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
  protected keyValueList(end: number, depth: number): Attributes {
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
  protected int64(): number | string {
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
  protected time(): bigint | null {
    const value = this.reader.fixed64();
    const time = typeof value === "bigint" ? value : BigInt(value);
    return time === 0n ? null : time;
  }

  /** A trace or span id as lower-case hex; `""` when empty or all zero. */
  protected id(): string {
    const end = this.messageEnd();
    const id = idHexOf(this.bytes, this.reader.pos, end);
    this.reader.pos = end;
    return id;
  }

  /** A string field: UTF-8, invalid sequences replaced (as protobuf-es does). */
  protected string(): string {
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
  protected messageEnd(): number {
    const reader = this.reader;
    const length = reader.uint32();
    const end = reader.pos + length;
    if (end > reader.len) throw new Error("length-delimited field runs past the end of the body");
    return end;
  }

  protected expectEnd(end: number): void {
    if (this.reader.pos !== end) throw new Error("field runs past the end of its message");
  }

  protected skip(key: number): void {
    const field = key >>> 3;
    if (field === 0) throw new Error("invalid field number 0");
    this.reader.skip(key & 7, field);
  }
}
