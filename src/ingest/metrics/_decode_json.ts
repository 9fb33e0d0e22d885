import type { Attributes } from "../../model/telemetry.ts";
import {
  arrayAt,
  attributesInto,
  doubleOf,
  field,
  intOf,
  type JsonObject,
  objectAt,
  objectOf,
  parseJsonObject,
  stringAt,
  timeOf,
} from "../otlp/json_values.ts";
import {
  type DecodedMetrics,
  type MetricDataKind,
  noteUnsupported,
  recordsNoValue,
  temporalityOf,
} from "./_point.ts";

/** The data member of a `Metric` object and what it is, in both JSON spellings. */
const DATA_MEMBERS: readonly (readonly [string, string, MetricDataKind])[] = [
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
  return metricsOfJson(parseJsonObject(bytes));
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
      decoded.points.push({
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
        noRecordedValue: typeof flags === "number" && recordsNoValue(flags),
        index: decoded.points.length,
      });
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
