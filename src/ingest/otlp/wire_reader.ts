/**
 * The protobuf wire reading shared by the OTLP decoders of logs and traces
 * (`_protobuf.ts`) and of metrics (`../metrics/_decode_protobuf.ts`):
 * attributes and `AnyValue`s, strings, ids, times, framing. Throws plain
 * errors on malformed input, which the callers turn into `OtlpDecodeError`.
 *
 * What is malformed, in every message read (issue #32):
 *
 * - A field the message's schema ({@link MessageSchema}) defines, sent in
 *   another wire type than the schema's: e.g. `08 b9 60`, `resource_logs`
 *   (length-delimited) as a varint. A field number the schema does not
 *   define (a newer OTLP's, or a reserved one) is skipped whatever its wire
 *   type: that is protobuf's forward compatibility. A repeated numeric field
 *   may come packed or one by one, so both its wire types are its own.
 * - A varint longer than 10 bytes (no 64-bit value needs more), wherever it
 *   is: a value, a skipped field, a tag, a length, inside a skipped group.
 * - A tag whose value does not fit in 32 bits (tags are uint32), and a length
 *   that runs past the end of its body or message. Neither is truncated to
 *   32 bits and read as another tag or length.
 *
 * @module
 */
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import type { Attributes, AttributeValue } from "../../model/telemetry.ts";
import { mayHoldNul } from "../nul_policy.ts";
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
export const I32 = WireType.Bit32;
export const VARINT = WireType.Varint;

/** No varint (64 bits, 7 per byte) takes more bytes. */
const MAX_VARINT_BYTES = 10;
const MAX_TAG = 0xffff_ffff;
const WIRE_TYPE_NAMES = ["varint", "i64", "len", "start group", "end group", "i32", "6", "7"];

/**
 * The wire types of the fields of one OTLP message, by field number: a bit
 * per wire type the field may be sent in, 0 for a number the message does
 * not define (unknown: skipped).
 */
export interface MessageSchema {
  /** The message's name in opentelemetry-proto, for errors. */
  readonly name: string;
  readonly wireTypes: Uint8Array;
}

/**
 * The schema of a message: each field number it defines (read or not) and
 * its wire type, or both of a packable repeated number's.
 */
export function messageSchema(
  name: string,
  fields: Readonly<Record<number, WireType | readonly WireType[]>>,
): MessageSchema {
  const numbers = Object.keys(fields).map(Number);
  const wireTypes = new Uint8Array(Math.max(...numbers) + 1);
  for (const number of numbers) {
    const types = fields[number]!;
    for (const type of typeof types === "number" ? [types] : types) {
      wireTypes[number] = wireTypes[number]! | (1 << type);
    }
  }
  return { name, wireTypes };
}

// opentelemetry-proto common/v1 and resource/v1.
const RESOURCE = messageSchema("Resource", { 1: LEN, 2: VARINT, 3: LEN });
const INSTRUMENTATION_SCOPE = messageSchema("InstrumentationScope", {
  1: LEN,
  2: LEN,
  3: LEN,
  4: VARINT,
});
const KEY_VALUE = messageSchema("KeyValue", { 1: LEN, 2: LEN, 3: VARINT });
const ANY_VALUE = messageSchema("AnyValue", {
  1: LEN,
  2: VARINT,
  3: VARINT,
  4: I64,
  5: LEN,
  6: LEN,
  7: LEN,
  8: VARINT,
});
const ARRAY_VALUE = messageSchema("ArrayValue", { 1: LEN });
const KEY_VALUE_LIST = messageSchema("KeyValueList", { 1: LEN });

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
  /** Whether a string read so far {@link mayHoldNul}. */
  nulPossible = false;

  constructor(protected readonly bytes: Uint8Array) {
    this.reader = new BinaryReader(bytes);
  }

  /** An `Export*ServiceRequest`, the whole body: each resource entry (1), read by `resourceEntry`. */
  protected exportRequest(request: MessageSchema, resourceEntry: (end: number) => void): void {
    const reader = this.reader;
    const end = reader.len;
    while (reader.pos < end) {
      const key = this.nextTag();
      if (key === FIRST_LEN) resourceEntry.call(this, this.messageEnd());
      else this.skipField(key, request);
    }
    this.expectEnd(end);
  }

  /**
   * A `Resource*` message (`ResourceLogs`, `ResourceSpans`, `ResourceMetrics`):
   * its resource's attributes (1) and each of its scope entries (2), read by
   * `scopeEntry` with them. The attributes are filled in place, so entries
   * read before a late `resource` field still share them.
   */
  protected resourceEntry(
    end: number,
    schema: MessageSchema,
    scopeEntry: (end: number, resource: Attributes) => void,
  ): void {
    const reader = this.reader;
    const resource: Attributes = {};
    while (reader.pos < end) {
      const key = this.nextTag();
      if (key === FIRST_LEN) this.attributeList(this.messageEnd(), resource);
      else if (key === SECOND_LEN) scopeEntry.call(this, this.messageEnd(), resource);
      else this.skipField(key, schema);
    }
    this.expectEnd(end);
  }

  /** A `Resource`: its `KeyValue`s in field 1 (`attributes`) into `into`. */
  protected attributeList(end: number, into: Attributes): void {
    const reader = this.reader;
    while (reader.pos < end) {
      const key = this.nextTag();
      if (key === FIRST_LEN) this.keyValue(this.messageEnd(), into, 0);
      else this.skipField(key, RESOURCE);
    }
    this.expectEnd(end);
  }

  /** `InstrumentationScope`: name (1). */
  protected scopeName(end: number): string {
    const reader = this.reader;
    let name = "";
    while (reader.pos < end) {
      const key = this.nextTag();
      if (key === FIRST_LEN) name = this.string();
      else this.skipField(key, INSTRUMENTATION_SCOPE);
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
      const key = this.nextTag();
      if (key === FIRST_LEN) name = this.string();
      else if (key === SECOND_LEN) value = this.anyValue(this.messageEnd(), depth);
      else this.skipField(key, KEY_VALUE);
    }
    this.expectEnd(end);
    setAttribute(into, name, value);
  }

  /** `AnyValue`: one of string, bool, int, double, array, kvlist, bytes; null when unset. */
  protected anyValue(end: number, depth: number): AttributeValue {
    const reader = this.reader;
    let value: AttributeValue = null;
    while (reader.pos < end) {
      const key = this.nextTag();
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
          this.skipField(key, ANY_VALUE);
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
      const key = this.nextTag();
      if (key === FIRST_LEN) values.push(this.anyValue(this.messageEnd(), depth));
      else this.skipField(key, ARRAY_VALUE);
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
      const key = this.nextTag();
      if (key === FIRST_LEN) this.keyValue(this.messageEnd(), values, depth);
      else this.skipField(key, KEY_VALUE_LIST);
    }
    this.expectEnd(end);
    return values;
  }

  /** An int64 varint: a number when safe, else the integer's decimal string. */
  protected int64(): number | string {
    const reader = this.reader;
    const start = reader.pos;
    const value = this.varint();
    // Up to 7 varint bytes (< 2^49, non-negative) the number is exact; longer ones are re-read as a bigint.
    if (reader.pos - start <= 7) return value;
    reader.pos = start;
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
    const text = this.#utf8();
    if (!this.nulPossible && mayHoldNul(text)) this.nulPossible = true;
    return text;
  }

  #utf8(): string {
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
    const length = this.varint();
    const end = reader.pos + length;
    if (end > reader.len) throw new Error("length-delimited field runs past the end of the body");
    return end;
  }

  protected expectEnd(end: number): void {
    if (this.reader.pos !== end) throw new Error("field runs past the end of its message");
  }

  /** A field's tag: a varint of at most 10 bytes whose value fits in 32 bits. */
  protected nextTag(): number {
    const reader = this.reader;
    // Tags of fields 1 to 15 take one byte.
    const byte = this.bytes[reader.pos]!;
    if (byte < 0x80) {
      reader.pos++;
      return byte;
    }
    const tag = this.varint();
    if (tag > MAX_TAG) throw new Error("a field tag does not fit in 32 bits");
    return tag;
  }

  /**
   * Skips a field `message`'s loop does not read: one of a number the
   * message does not define, or of a number it does in that number's wire
   * type. A defined number in another wire type is malformed.
   */
  protected skipField(key: number, message: MessageSchema): void {
    const field = key >>> 3;
    const wireType = key & 7;
    const own = field < message.wireTypes.length ? message.wireTypes[field]! : 0;
    if (own !== 0 && (own & (1 << wireType)) === 0) {
      const expected = WIRE_TYPE_NAMES.filter((_, type) => (own & (1 << type)) !== 0)
        .join(" or ");
      throw new Error(
        `${message.name} field ${field} has wire type ${wireType} (${
          WIRE_TYPE_NAMES[wireType]
        }), not ${expected}`,
      );
    }
    this.skip(key, 0);
  }

  /**
   * A varint's value as a number (exact up to 2^53, larger ones only as
   * large), refusing one longer than 10 bytes or past the end of the body.
   */
  private varint(): number {
    const bytes = this.bytes;
    const reader = this.reader;
    let pos = reader.pos;
    let value = 0;
    let scale = 1;
    for (let i = 0; i < MAX_VARINT_BYTES; i++) {
      if (pos >= reader.len) throw new Error("varint runs past the end of the body");
      const byte = bytes[pos++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        reader.pos = pos;
        return value;
      }
      scale *= 128;
    }
    throw new Error(`varint longer than ${MAX_VARINT_BYTES} bytes`);
  }

  /** Skips one field of any wire type; a group's fields are skipped as unknown ones. */
  private skip(key: number, depth: number): void {
    const field = key >>> 3;
    if (field === 0) throw new Error("invalid field number 0");
    const reader = this.reader;
    switch (key & 7) {
      case WireType.Varint:
        this.varint();
        return;
      case WireType.Bit64:
        reader.pos += 8;
        break;
      case WireType.LengthDelimited:
        reader.pos = this.messageEnd();
        return;
      case WireType.Bit32:
        reader.pos += 4;
        break;
      case WireType.StartGroup:
        if (depth >= MAX_VALUE_DEPTH) {
          throw new Error(`groups nested deeper than ${MAX_VALUE_DEPTH}`);
        }
        for (;;) {
          const inner = this.nextTag();
          if ((inner & 7) === WireType.EndGroup) {
            if (inner >>> 3 !== field) throw new Error("end group of another field");
            return;
          }
          this.skip(inner, depth + 1);
        }
      default:
        throw new Error(`invalid wire type ${key & 7}`);
    }
    if (reader.pos > reader.len) throw new Error("fixed-width field runs past the end of the body");
  }
}
