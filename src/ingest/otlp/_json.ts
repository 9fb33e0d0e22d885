import type { Attributes, AttributeValue, OtlpRecord } from "../types.ts";
import { TIME_MAX_NS, TIME_NOT_FIXED64 } from "../limits.ts";
import { OtlpDecodeError } from "./_errors.ts";
import { hexOf, idHexOf } from "./_hex.ts";
import { eventNameOf, MAX_VALUE_DEPTH, setAttribute } from "./_record.ts";
import type { Signal } from "./_types.ts";

type JsonObject = { [key: string]: unknown };

const utf8 = new TextDecoder("utf-8", { fatal: true });

const EMPTY: readonly unknown[] = [];
const DECIMAL_INTEGER = /^-?[0-9]+$/;
const UNSIGNED_INTEGER = /^[0-9]+$/;
const HEX = /^[0-9a-fA-F]*$/;
const ALL_ZERO = /^0*$/;
/** Digits of the largest fixed64, 18446744073709551615. */
const FIXED64_DIGITS = 20;
/** Integers above this double are certainly above 2^64−1. */
const MAX_FIXED64_NUMBER = 2 ** 64;
const STATUS_CODES: Record<string, number> = {
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

/** The top-level key of each signal's export request, lowerCamelCase and snake_case. */
const TOP_KEYS: readonly (readonly [Signal, string, string])[] = [
  ["logs", "resourceLogs", "resource_logs"],
  ["traces", "resourceSpans", "resource_spans"],
  ["metrics", "resourceMetrics", "resource_metrics"],
];

/**
 * Decodes an OTLP/JSON export request, routed by its top key whatever the
 * path (the path's signal wins only when several keys are present, or none).
 *
 * @throws {OtlpDecodeError} on text that is not UTF-8 JSON of the OTLP shape
 */
export function decodeJson(
  bytes: Uint8Array,
  pathSignal: Signal,
): { signal: Signal; records: OtlpRecord[] } {
  let root: unknown;
  try {
    root = JSON.parse(utf8.decode(bytes));
  } catch (error) {
    throw new OtlpDecodeError(
      `Invalid OTLP JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!isObject(root)) throw shapeError("the body is not a JSON object");

  const present = TOP_KEYS.filter(([, camel, snake]) => root[camel] != null || root[snake] != null);
  const top = present.find(([signal]) => signal === pathSignal) ?? present[0];
  if (top === undefined) return { signal: pathSignal, records: [] };
  const [signal, camel, snake] = top;
  const resourceEntries = arrayAt(root, camel, snake);
  const records: OtlpRecord[] = [];
  if (signal === "metrics") {
    for (const entry of resourceEntries) objectOf(entry, camel);
  } else {
    for (const entry of resourceEntries) resourceEntry(entry, signal, records);
  }
  return { signal, records };
}

/** `ResourceLogs` / `ResourceSpans`: `resource`, then its scopes and their records. */
function resourceEntry(entry: unknown, signal: "logs" | "traces", records: OtlpRecord[]): void {
  const logs = signal === "logs";
  const resourceEntry = objectOf(entry, logs ? "resourceLogs" : "resourceSpans");
  const resource: Attributes = {};
  const resourceObject = objectAt(resourceEntry, "resource", "resource");
  if (resourceObject !== null) attributesInto(resource, resourceObject);
  const scopeEntries = logs
    ? arrayAt(resourceEntry, "scopeLogs", "scope_logs")
    : arrayAt(resourceEntry, "scopeSpans", "scope_spans");
  for (const scopeEntry of scopeEntries) {
    const scoped = objectOf(scopeEntry, logs ? "scopeLogs" : "scopeSpans");
    const scope = objectAt(scoped, "scope", "scope");
    const scopeName = scope === null ? "" : stringAt(scope, "name", "name");
    if (logs) {
      for (const record of arrayAt(scoped, "logRecords", "log_records")) {
        records.push(
          logRecord(objectOf(record, "logRecords"), resource, scopeName, records.length),
        );
      }
    } else {
      for (const span of arrayAt(scoped, "spans", "spans")) {
        records.push(spanRecord(objectOf(span, "spans"), resource, scopeName, records.length));
      }
    }
  }
}

function logRecord(
  record: JsonObject,
  resource: Attributes,
  scopeName: string,
  index: number,
): OtlpRecord {
  const attributes: Attributes = {};
  attributesInto(attributes, record);
  const body = anyValue(field(record, "body", "body"), 0);
  return {
    signal: "logs",
    resource,
    scopeName,
    eventName: eventNameOf(stringAt(record, "eventName", "event_name"), attributes, body),
    attributes,
    body,
    timeUnixNano: timeOf(field(record, "timeUnixNano", "time_unix_nano")),
    observedTimeUnixNano: timeOf(field(record, "observedTimeUnixNano", "observed_time_unix_nano")),
    traceId: idOf(field(record, "traceId", "trace_id")),
    spanId: idOf(field(record, "spanId", "span_id")),
    statusCode: null,
    statusMessage: "",
    index,
  };
}

function spanRecord(
  span: JsonObject,
  resource: Attributes,
  scopeName: string,
  index: number,
): OtlpRecord {
  const attributes: Attributes = {};
  attributesInto(attributes, span);
  const status = objectAt(span, "status", "status");
  return {
    signal: "traces",
    resource,
    scopeName,
    eventName: stringAt(span, "name", "name"),
    attributes,
    body: null,
    timeUnixNano: timeOf(field(span, "startTimeUnixNano", "start_time_unix_nano")),
    observedTimeUnixNano: timeOf(field(span, "endTimeUnixNano", "end_time_unix_nano")),
    traceId: idOf(field(span, "traceId", "trace_id")),
    spanId: idOf(field(span, "spanId", "span_id")),
    statusCode: status === null ? 0 : statusCodeOf(status.code),
    statusMessage: status === null ? "" : stringAt(status, "message", "message"),
    index,
  };
}

/** Reads `owner.attributes` (a list of `{key, value}`) into `into`. */
function attributesInto(into: Attributes, owner: JsonObject): void {
  for (const entry of arrayAt(owner, "attributes", "attributes")) keyValueInto(into, entry, 0);
}

function keyValueInto(into: Attributes, entry: unknown, depth: number): void {
  const keyValue = objectOf(entry, "attribute");
  const key = keyValue.key;
  if (typeof key !== "string") throw shapeError('an attribute "key" is not a string');
  setAttribute(into, key, anyValue(keyValue.value, depth));
}

/** An `AnyValue` object as a plain value; `{}`, null or absent → null. */
function anyValue(value: unknown, depth: number): AttributeValue {
  if (value == null) return null;
  const any = objectOf(value, "value");
  for (const kind in any) {
    const inner = any[kind];
    if (inner == null) continue;
    switch (kind) {
      case "stringValue":
      case "string_value":
        if (typeof inner !== "string") throw shapeError('"stringValue" is not a string');
        return inner;
      case "intValue":
      case "int_value":
        return intOf(inner);
      case "boolValue":
      case "bool_value":
        if (typeof inner !== "boolean") throw shapeError('"boolValue" is not a boolean');
        return inner;
      case "doubleValue":
      case "double_value":
        return doubleOf(inner);
      case "arrayValue":
      case "array_value": {
        if (depth >= MAX_VALUE_DEPTH) {
          throw shapeError(`values nested deeper than ${MAX_VALUE_DEPTH}`);
        }
        const values = arrayAt(objectOf(inner, kind), "values", "values");
        const array: AttributeValue[] = new Array(values.length);
        for (let i = 0; i < values.length; i++) array[i] = anyValue(values[i], depth + 1);
        return array;
      }
      case "kvlistValue":
      case "kvlist_value": {
        if (depth >= MAX_VALUE_DEPTH) {
          throw shapeError(`values nested deeper than ${MAX_VALUE_DEPTH}`);
        }
        const list: Attributes = {};
        for (const entry of arrayAt(objectOf(inner, kind), "values", "values")) {
          keyValueInto(list, entry, depth + 1);
        }
        return list;
      }
      case "bytesValue":
      case "bytes_value":
        if (typeof inner !== "string") throw shapeError('"bytesValue" is not a string');
        return hexOf(base64Bytes(inner));
    }
  }
  return null;
}

/** An int64: a number when safe, else the integer's decimal string. */
function intOf(value: unknown): number | string {
  if (typeof value === "number") {
    if (Number.isInteger(value)) return value;
  } else if (typeof value === "string" && DECIMAL_INTEGER.test(value)) {
    const number = Number(value);
    if (Number.isSafeInteger(number)) return number;
    // Past int64's 20 characters the text stays as sent (no quadratic bigint
    // parse); the mapper finds it out of range.
    return value.length <= 20 ? BigInt(value).toString() : value;
  }
  throw shapeError(`"intValue" is not an integer: ${preview(value)}`);
}

function doubleOf(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string") {
    const number = Number(value);
    if (!Number.isNaN(number) || value === "NaN") return number;
  }
  throw shapeError(`"doubleValue" is not a number: ${JSON.stringify(value)}`);
}

/**
 * A fixed64 nanosecond time, sent as a decimal string or a number; null when
 * absent or 0. A larger integer is read as TIME_NOT_FIXED64, which rejects
 * its record (not the export), without a bigint of a text of any length.
 */
function timeOf(value: unknown): bigint | null {
  if (value == null) return null;
  let time: bigint;
  if (typeof value === "string" && UNSIGNED_INTEGER.test(value)) {
    time = value.length <= FIXED64_DIGITS ? BigInt(value) : bigDecimal(value);
  } else if (typeof value === "number" && Number.isInteger(value) && value >= 0) {
    time = value <= MAX_FIXED64_NUMBER ? BigInt(value) : TIME_NOT_FIXED64;
  } else throw shapeError(`a time is not a non-negative integer: ${preview(value)}`);
  if (time > TIME_MAX_NS) return TIME_NOT_FIXED64;
  return time === 0n ? null : time;
}

/** A decimal text longer than any fixed64: its value when leading zeros hid a small one. */
function bigDecimal(digits: string): bigint {
  let i = 0;
  while (i < digits.length - 1 && digits.charCodeAt(i) === 0x30) i++;
  return digits.length - i <= FIXED64_DIGITS ? BigInt(digits.slice(i)) : TIME_NOT_FIXED64;
}

/** A value for an error message: at most 40 characters of its JSON. */
function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** A trace or span id: hex per OTLP/JSON (base64 tolerated); `""` when absent or all zero. */
function idOf(value: unknown): string {
  if (value == null || value === "") return "";
  if (typeof value !== "string") {
    throw shapeError(`an id is not a string: ${JSON.stringify(value)}`);
  }
  if (value.length % 2 === 0 && HEX.test(value)) {
    return ALL_ZERO.test(value) ? "" : value.toLowerCase();
  }
  const bytes = base64Bytes(value);
  return idHexOf(bytes, 0, bytes.length);
}

function statusCodeOf(code: unknown): number {
  if (code == null) return 0;
  if (typeof code === "number" && Number.isInteger(code)) return code;
  if (typeof code === "string" && code in STATUS_CODES) return STATUS_CODES[code]!;
  throw shapeError(`"status.code" is not an integer: ${JSON.stringify(code)}`);
}

/** Standard or URL-safe base64, padding optional. */
function base64Bytes(text: string): Uint8Array {
  let binary: string;
  try {
    binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    throw shapeError(`not hex or base64: ${JSON.stringify(text)}`);
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `owner[camel]`, else `owner[snake]`; OTLP/JSON receivers accept both spellings. */
function field(owner: JsonObject, camel: string, snake: string): unknown {
  return owner[camel] ?? owner[snake];
}

function objectOf(value: unknown, name: string): JsonObject {
  if (!isObject(value)) throw shapeError(`an item of "${name}" is not an object`);
  return value;
}

function objectAt(owner: JsonObject, camel: string, snake: string): JsonObject | null {
  const value = field(owner, camel, snake);
  if (value == null) return null;
  if (!isObject(value)) throw shapeError(`"${camel}" is not an object`);
  return value;
}

function arrayAt(owner: JsonObject, camel: string, snake: string): readonly unknown[] {
  const value = field(owner, camel, snake);
  if (value == null) return EMPTY;
  if (!Array.isArray(value)) throw shapeError(`"${camel}" is not an array`);
  return value;
}

function stringAt(owner: JsonObject, camel: string, snake: string): string {
  const value = field(owner, camel, snake);
  if (value == null) return "";
  if (typeof value !== "string") throw shapeError(`"${camel}" is not a string`);
  return value;
}

function shapeError(detail: string): OtlpDecodeError {
  return new OtlpDecodeError(`Invalid OTLP JSON: ${detail}`);
}
