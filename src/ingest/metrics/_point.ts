import type { Attributes } from "../../model/telemetry.ts";

/** The data types of OTLP metrics we read; exponential histograms and summaries are only counted. */
export type MetricKind = "sum" | "gauge" | "histogram";

/**
 * How a sum's or histogram's points relate: `delta` points each cover their
 * own interval, `cumulative` points count from their start time.
 * `unspecified` (OTLP's 0) is what gauges carry, and makes a sum unusable.
 */
export type Temporality = "delta" | "cumulative" | "unspecified";

/** One data point of one metric as sent, before the limits: one shape whatever the encoding. */
export interface DecodedMetricPoint {
  /** Resource attributes; shared by every point of one resource: treat as read-only. */
  resource: Attributes;
  /** Instrumentation scope name, `""` when absent. */
  scopeName: string;
  /** The metric's (instrument's) name, e.g. `claude_code.lines_of_code.count`. */
  metric: string;
  unit: string;
  kind: MetricKind;
  temporality: Temporality;
  /** Sums: `isMonotonic`; histograms are monotonic in their count; gauges are not. */
  monotonic: boolean;
  /** The point's attributes. */
  attributes: Attributes;
  /** Null when absent or 0. */
  startTimeUnixNano: bigint | null;
  /** Null when absent or 0. */
  timeUnixNano: bigint | null;
  /**
   * Sums and gauges: `asDouble` or `asInt` (an int64 past 2^53 as its decimal
   * text, which the limits reject); histograms: their `sum`. Null when absent.
   */
  value: number | string | null;
  /** Histograms: their `count` (as `value` for large ones); null for sums and gauges. */
  count: number | string | null;
  /** `flags` bit 0 (`FLAG_NO_RECORDED_VALUE`): the series went stale; the point carries nothing. */
  noRecordedValue: boolean;
  /** Position of the point within its export request (0-based). */
  index: number;
}

/** Points of data types we do not read (exponential histograms, summaries), per metric. */
export interface UnsupportedMetric {
  metric: string;
  kind: "exponential_histogram" | "summary";
  points: number;
}

/** Every data member a `Metric` may hold: the kinds read and those only counted. */
export type MetricDataKind = MetricKind | UnsupportedMetric["kind"];

/** One decoded `ExportMetricsServiceRequest`. */
export interface DecodedMetrics {
  points: DecodedMetricPoint[];
  unsupported: UnsupportedMetric[];
}

/** `DataPointFlags.FLAG_NO_RECORDED_VALUE`. */
const NO_RECORDED_VALUE = 1;

/** Whether a point's `flags` have `FLAG_NO_RECORDED_VALUE`: the series went stale. */
export function recordsNoValue(flags: number): boolean {
  return (flags & NO_RECORDED_VALUE) !== 0;
}

/**
 * OTLP's `AggregationTemporality` number (or JSON enum name) as a
 * {@link Temporality}; a value OTLP does not define reads as `unspecified`.
 */
export function temporalityOf(value: unknown): Temporality {
  switch (value) {
    case 0:
    case "AGGREGATION_TEMPORALITY_UNSPECIFIED":
      return "unspecified";
    case 1:
    case "AGGREGATION_TEMPORALITY_DELTA":
      return "delta";
    case 2:
    case "AGGREGATION_TEMPORALITY_CUMULATIVE":
      return "cumulative";
  }
  return "unspecified";
}

/** Counts one unsupported metric's points into `into`. */
export function noteUnsupported(
  into: UnsupportedMetric[],
  metric: string,
  kind: UnsupportedMetric["kind"],
  points: number,
): void {
  const entry = into.find((u) => u.metric === metric && u.kind === kind);
  if (entry) entry.points += points;
  else into.push({ metric, kind, points });
}
