import { TIME_MAX_NS, TIME_NOT_FIXED64 } from "../limits.ts";
import { OtlpDecodeError } from "../otlp/mod.ts";
import type { Attributes, AttributeValue } from "../types.ts";
import {
  type DecodedMetricPoint,
  type DecodedMetrics,
  type MetricKind,
  noteUnsupported,
  temporalityOf,
} from "./_point.ts";

type JsonObject = { [key: string]: unknown };

const utf8 = new TextDecoder("utf-8", { fatal: true });
const EMPTY: readonly unknown[] = [];
const DECIMAL_INTEGER = /^-?[0-9]+$/;
const UNSIGNED_INTEGER = /^[0-9]+$/;
/** Digits of the largest fixed64, 18446744073709551615. */
const FIXED64_DIGITS = 20;
/** Deepest nesting of array and kvlist values accepted, as for logs. */
const MAX_VALUE_DEPTH = 64;
/** `DataPointFlags.FLAG_NO_RECORDED_VALUE`. */
const NO_RECORDED_VALUE = 1;

/** The data member of a `Metric` object and what it is, in both JSON spellings. */
const DATA_MEMBERS:
  readonly (readonly [string, string, MetricKind | "exponential_histogram" | "summary"])[] = [
    ["sum", "sum", "sum"],
    ["gauge", "gauge", "gauge"],
    ["histogram", "histogram", "histogram"],
    ["exponentialHistogram", "exponential_histogram", "exponential_histogram"],
    ["summary", "summary", "summary"],
  ];

/**
 * Decodes an OTLP/JSON `ExportMetricsServiceRequest` body.
 *
 * @throws {OtlpDecodeError} on text that is not UTF-8 JSON of the OTLP shape
 */
export function decodeMetricsJson(bytes: Uint8Array): DecodedMetrics {
  let root: unknown;
  try {
    root = JSON.parse(utf8.decode(bytes));
  } catch (error) {
    throw new OtlpDecodeError(
      `Invalid OTLP JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!isObject(root)) throw shapeError("the body is not a JSON object");
  return metricsOfJson(root);
}

/**
 * The points of an already parsed OTLP/JSON export request (its
 * `resourceMetrics`), for a decoder that routed the body by its top key.
 *
 * @throws {OtlpDecodeError} when it is not of the OTLP shape
 */
export function metricsOfJson(root: JsonObject): DecodedMetrics {
  const decoded: DecodedMetrics = { points: [], unsupported: [] };
  for (const entry of arrayAt(root, "resourceMetrics", "resource_metrics")) {
    const resourceEntry = objectOf(entry, "resourceMetrics");
    const resource: Attributes = {};
    const resourceObject = objectAt(resourceEntry, "resource", "resource");
    if (resourceObject !== null) attributesInto(resource, resourceObject);
    for (const scopeEntry of arrayAt(resourceEntry, "scopeMetrics", "scope_metrics")) {
      const scoped = objectOf(scopeEntry, "scopeMetrics");
      const scope = objectAt(scoped, "scope", "scope");
      const scopeName = scope === null ? "" : stringAt(scope, "name", "name");
      for (const metric of arrayAt(scoped, "metrics", "metrics")) {
        metricInto(decoded, objectOf(metric, "metrics"), resource, scopeName);
      }
    }
  }
  return decoded;
}

/** One `Metric`: its name and unit, then the points of its one data member. */
function metricInto(
  decoded: DecodedMetrics,
  metric: JsonObject,
  resource: Attributes,
  scopeName: string,
): void {
  const name = stringAt(metric, "name", "name");
  const unit = stringAt(metric, "unit", "unit");
  for (const [camel, snake, kind] of DATA_MEMBERS) {
    const data = objectAt(metric, camel, snake);
    if (data === null) continue;
    const points = arrayAt(data, "dataPoints", "data_points");
    if (kind === "exponential_histogram" || kind === "summary") {
      noteUnsupported(decoded.unsupported, name, kind, points.length);
      return;
    }
    const temporality = kind === "gauge"
      ? "unspecified"
      : temporalityOf(field(data, "aggregationTemporality", "aggregation_temporality") ?? 0);
    const monotonic = kind === "histogram" ||
      (kind === "sum" && field(data, "isMonotonic", "is_monotonic") === true);
    for (const item of points) {
      const point = objectOf(item, "dataPoints");
      const attributes: Attributes = {};
      attributesInto(attributes, point);
      const histogram = kind === "histogram";
      const sum = field(point, "sum", "sum");
      const count = field(point, "count", "count");
      const flags = field(point, "flags", "flags");
      const decodedPoint: DecodedMetricPoint = {
        resource,
        scopeName,
        metric: name,
        unit,
        kind,
        temporality,
        monotonic,
        attributes,
        startTimeUnixNano: timeOf(field(point, "startTimeUnixNano", "start_time_unix_nano")),
        timeUnixNano: timeOf(field(point, "timeUnixNano", "time_unix_nano")),
        value: histogram ? (sum == null ? null : doubleOf(sum, "sum")) : numberValue(point),
        count: histogram ? (count == null ? 0 : intOf(count, "count")) : null,
        noRecordedValue: typeof flags === "number" && (flags & NO_RECORDED_VALUE) !== 0,
        index: decoded.points.length,
      };
      decoded.points.push(decodedPoint);
    }
    return;
  }
}

/** A `NumberDataPoint`'s value: `asDouble`, else `asInt`; null when neither is set. */
function numberValue(point: JsonObject): number | string | null {
  const double = field(point, "asDouble", "as_double");
  if (double != null) return doubleOf(double, "asDouble");
  const int = field(point, "asInt", "as_int");
  if (int != null) return intOf(int, "asInt");
  return null;
}

/** Reads `owner.attributes` (a list of `{key, value}`) into `into`. */
function attributesInto(into: Attributes, owner: JsonObject): void {
  for (const entry of arrayAt(owner, "attributes", "attributes")) keyValueInto(into, entry, 0);
}

function keyValueInto(into: Attributes, entry: unknown, depth: number): void {
  const keyValue = objectOf(entry, "attribute");
  const key = keyValue.key;
  if (typeof key !== "string") throw shapeError('an attribute "key" is not a string');
  const value = anyValue(keyValue.value, depth);
  if (key === "__proto__") {
    Object.defineProperty(into, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else into[key] = value;
}

/** An `AnyValue` object as a plain value; `{}`, null or absent → null. Bytes become hex. */
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
        return intOf(inner, "intValue");
      case "boolValue":
      case "bool_value":
        if (typeof inner !== "boolean") throw shapeError('"boolValue" is not a boolean');
        return inner;
      case "doubleValue":
      case "double_value":
        return doubleOf(inner, "doubleValue");
      case "arrayValue":
      case "array_value": {
        if (depth >= MAX_VALUE_DEPTH) {
          throw shapeError(`values nested deeper than ${MAX_VALUE_DEPTH}`);
        }
        return arrayAt(objectOf(inner, kind), "values", "values").map((item) =>
          anyValue(item, depth + 1)
        );
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
        return bytesHex(inner);
    }
  }
  return null;
}

/** An int64 (or uint64): a number when safe, else the integer's decimal text (out of range later). */
function intOf(value: unknown, what: string): number | string {
  if (typeof value === "number") {
    if (Number.isInteger(value)) return value;
  } else if (typeof value === "string" && DECIMAL_INTEGER.test(value)) {
    const number = Number(value);
    // Past 2^53 the text stays as sent (no bigint of a text of any length).
    return Number.isSafeInteger(number) ? number : value;
  }
  throw shapeError(`"${what}" is not an integer: ${preview(value)}`);
}

/** A double: a number, or its text (`"NaN"`, `"Infinity"` as proto3 JSON writes them). */
function doubleOf(value: unknown, what: string): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" && value.trim() !== "") {
    const number = Number(value);
    if (!Number.isNaN(number) || value === "NaN") return number;
  }
  throw shapeError(`"${what}" is not a number: ${preview(value)}`);
}

/**
 * A fixed64 nanosecond time, as a decimal string or a number; null when
 * absent or 0; TIME_NOT_FIXED64 when larger than any fixed64 (the limits
 * reject the point, not the export).
 */
function timeOf(value: unknown): bigint | null {
  if (value == null) return null;
  let time: bigint;
  if (typeof value === "string" && UNSIGNED_INTEGER.test(value)) {
    const digits = value.replace(/^0+(?=.)/, "");
    time = digits.length <= FIXED64_DIGITS ? BigInt(digits) : TIME_NOT_FIXED64;
  } else if (typeof value === "number" && Number.isInteger(value) && value >= 0) {
    time = value <= 2 ** 64 ? BigInt(value) : TIME_NOT_FIXED64;
  } else throw shapeError(`a time is not a non-negative integer: ${preview(value)}`);
  if (time > TIME_MAX_NS) return TIME_NOT_FIXED64;
  return time === 0n ? null : time;
}

/** Standard or URL-safe base64 as lower-case hex. */
function bytesHex(text: string): string {
  let binary: string;
  try {
    binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    throw shapeError(`not base64: ${preview(text)}`);
  }
  let hex = "";
  for (let i = 0; i < binary.length; i++) hex += binary.charCodeAt(i).toString(16).padStart(2, "0");
  return hex;
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
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
