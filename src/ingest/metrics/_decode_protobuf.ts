import type { Attributes } from "../../model/telemetry.ts";
import {
  FIRST_LEN,
  I64,
  LEN,
  type MessageSchema,
  messageSchema,
  OtlpWireReader,
  SECOND_LEN,
  tag,
  VARINT,
} from "../otlp/wire_reader.ts";
import {
  type DecodedMetricPoint,
  type DecodedMetrics,
  type MetricDataKind,
  type MetricKind,
  noteUnsupported,
  recordsNoValue,
  temporalityOf,
  type UnsupportedMetric,
} from "./_point.ts";

const METRIC_UNIT = tag(3, LEN);
const METRIC_GAUGE = tag(5, LEN);
const METRIC_SUM = tag(7, LEN);
const METRIC_HISTOGRAM = tag(9, LEN);
const METRIC_EXPONENTIAL_HISTOGRAM = tag(10, LEN);
const METRIC_SUMMARY = tag(11, LEN);

const AGGREGATION_TEMPORALITY = tag(2, VARINT);
const IS_MONOTONIC = tag(3, VARINT);

const POINT_START_TIME = tag(2, I64);
const POINT_TIME = tag(3, I64);
const NUMBER_AS_DOUBLE = tag(4, I64);
const NUMBER_AS_INT = tag(6, I64);
const NUMBER_ATTRIBUTES = tag(7, LEN);
const NUMBER_FLAGS = tag(8, VARINT);
const HISTOGRAM_COUNT = tag(4, I64);
const HISTOGRAM_SUM = tag(5, I64);
const HISTOGRAM_ATTRIBUTES = tag(9, LEN);
const HISTOGRAM_FLAGS = tag(10, VARINT);

// Every field of the messages read (opentelemetry-proto collector and
// metrics v1), read or not: one in another wire type is malformed.
const EXPORT_REQUEST = messageSchema("ExportMetricsServiceRequest", { 1: LEN });
const RESOURCE_METRICS = messageSchema("ResourceMetrics", { 1: LEN, 2: LEN, 3: LEN });
const SCOPE_METRICS = messageSchema("ScopeMetrics", { 1: LEN, 2: LEN, 3: LEN });
const METRIC = messageSchema("Metric", {
  1: LEN,
  2: LEN,
  3: LEN,
  5: LEN,
  7: LEN,
  9: LEN,
  10: LEN,
  11: LEN,
  12: LEN,
});
const DATA: Record<MetricDataKind, MessageSchema> = {
  gauge: messageSchema("Gauge", { 1: LEN }),
  sum: messageSchema("Sum", { 1: LEN, 2: VARINT, 3: VARINT }),
  histogram: messageSchema("Histogram", { 1: LEN, 2: VARINT }),
  "exponential_histogram": messageSchema("ExponentialHistogram", { 1: LEN, 2: VARINT }),
  summary: messageSchema("Summary", { 1: LEN }),
};
const NUMBER_DATA_POINT = messageSchema("NumberDataPoint", {
  2: I64,
  3: I64,
  4: I64,
  5: LEN,
  6: I64,
  7: LEN,
  8: VARINT,
});
const HISTOGRAM_DATA_POINT = messageSchema("HistogramDataPoint", {
  2: I64,
  3: I64,
  4: I64,
  5: I64,
  // Repeated fixed64 and double: packed, or one by one.
  6: [LEN, I64],
  7: [LEN, I64],
  8: LEN,
  9: LEN,
  10: VARINT,
  11: I64,
  12: I64,
});

/** Where the two kinds of data point keep their attributes and flags. */
const NUMBER_POINT = {
  schema: NUMBER_DATA_POINT,
  attributes: NUMBER_ATTRIBUTES,
  flags: NUMBER_FLAGS,
};
const HISTOGRAM_POINT = {
  schema: HISTOGRAM_DATA_POINT,
  attributes: HISTOGRAM_ATTRIBUTES,
  flags: HISTOGRAM_FLAGS,
};

/**
 * Decodes a protobuf `ExportMetricsServiceRequest`. Throws plain errors on
 * malformed input, which the caller turns into `OtlpDecodeError`.
 */
export function decodeMetricsProtobuf(bytes: Uint8Array): DecodedMetrics {
  return new MetricsDecoder(bytes).request();
}

/** One pass over one request, appending points as they are read. */
class MetricsDecoder extends OtlpWireReader {
  private readonly decoded: DecodedMetrics = { points: [], unsupported: [] };

  request(): DecodedMetrics {
    this.exportRequest(EXPORT_REQUEST, this.resourceMetrics);
    return this.decoded;
  }

  /** `ResourceMetrics`: resource (1), scope_metrics (2). */
  private resourceMetrics(end: number): void {
    this.resourceEntry(end, RESOURCE_METRICS, this.scopeMetrics);
  }

  /** `ScopeMetrics`: scope (1), metrics (2). */
  private scopeMetrics(end: number, resource: Attributes): void {
    const first = this.decoded.points.length;
    let scopeName = "";
    while (this.reader.pos < end) {
      const key = this.nextTag();
      if (key === FIRST_LEN) scopeName = this.scopeName(this.messageEnd());
      else if (key === SECOND_LEN) this.metric(this.messageEnd(), resource);
      else this.skipField(key, SCOPE_METRICS);
    }
    this.expectEnd(end);
    for (let i = first; i < this.decoded.points.length; i++) {
      this.decoded.points[i]!.scopeName = scopeName;
    }
  }

  /** `Metric`: name (1), unit (3), and one of gauge (5), sum (7), histogram (9), …. */
  private metric(end: number, resource: Attributes): void {
    const points = this.decoded.points;
    const first = points.length;
    let name = "";
    let unit = "";
    // The metric's name may come after its data.
    const unsupported: Omit<UnsupportedMetric, "metric">[] = [];
    while (this.reader.pos < end) {
      const key = this.nextTag();
      switch (key) {
        case FIRST_LEN:
          name = this.string();
          break;
        case METRIC_UNIT:
          unit = this.string();
          break;
        case METRIC_GAUGE:
          this.data(this.messageEnd(), "gauge", resource);
          break;
        case METRIC_SUM:
          this.data(this.messageEnd(), "sum", resource);
          break;
        case METRIC_HISTOGRAM:
          this.data(this.messageEnd(), "histogram", resource);
          break;
        case METRIC_EXPONENTIAL_HISTOGRAM:
          unsupported.push({
            kind: "exponential_histogram",
            points: this.countPoints(DATA.exponential_histogram),
          });
          break;
        case METRIC_SUMMARY:
          unsupported.push({ kind: "summary", points: this.countPoints(DATA.summary) });
          break;
        default:
          this.skipField(key, METRIC);
      }
    }
    this.expectEnd(end);
    // The name may follow the data on the wire.
    for (let i = first; i < points.length; i++) {
      points[i]!.metric = name;
      points[i]!.unit = unit;
    }
    for (const u of unsupported) noteUnsupported(this.decoded.unsupported, name, u.kind, u.points);
  }

  /** `Gauge` / `Sum` / `Histogram`: data_points (1), aggregation_temporality (2), is_monotonic (3). */
  private data(end: number, kind: MetricKind, resource: Attributes): void {
    const points = this.decoded.points;
    const first = points.length;
    let temporality = 0;
    let monotonic = false;
    const schema = DATA[kind];
    while (this.reader.pos < end) {
      const key = this.nextTag();
      if (key === FIRST_LEN) {
        this.point(this.messageEnd(), kind, resource);
      } else if (key === AGGREGATION_TEMPORALITY && kind !== "gauge") {
        temporality = this.reader.int32();
      } else if (key === IS_MONOTONIC && kind === "sum") monotonic = this.reader.bool();
      else this.skipField(key, schema);
    }
    this.expectEnd(end);
    const decodedTemporality = kind === "gauge" ? "unspecified" : temporalityOf(temporality);
    for (let i = first; i < points.length; i++) {
      points[i]!.temporality = decodedTemporality;
      points[i]!.monotonic = kind === "histogram" || monotonic;
    }
  }

  /** The number of data points (1) of a data member we do not read. */
  private countPoints(schema: MessageSchema): number {
    const end = this.messageEnd();
    let count = 0;
    while (this.reader.pos < end) {
      const key = this.nextTag();
      if (key === FIRST_LEN) {
        count++;
        this.reader.pos = this.messageEnd();
      } else this.skipField(key, schema);
    }
    this.expectEnd(end);
    return count;
  }

  /**
   * `NumberDataPoint` (attributes 7, flags 8, as_double 4, as_int 6) or
   * `HistogramDataPoint` (attributes 9, flags 10, count 4, sum 5); both:
   * start (2), time (3).
   */
  private point(end: number, kind: MetricKind, resource: Attributes): void {
    const histogram = kind === "histogram";
    const fields = histogram ? HISTOGRAM_POINT : NUMBER_POINT;
    const point = this.newPoint(kind, resource);
    if (histogram) point.count = 0;
    while (this.reader.pos < end) {
      const key = this.nextTag();
      if (key === fields.attributes) this.keyValue(this.messageEnd(), point.attributes, 0);
      else if (key === POINT_START_TIME) point.startTimeUnixNano = this.time();
      else if (key === POINT_TIME) point.timeUnixNano = this.time();
      else if (key === fields.flags) point.noRecordedValue = recordsNoValue(this.reader.uint32());
      else if (!(histogram ? this.histogramValue(key, point) : this.numberValue(key, point))) {
        this.skipField(key, fields.schema);
      }
    }
    this.expectEnd(end);
  }

  /** A `NumberDataPoint`'s value, as_double (4) or as_int (6); false for another field. */
  private numberValue(key: number, point: DecodedMetricPoint): boolean {
    if (key === NUMBER_AS_DOUBLE) point.value = this.reader.double();
    else if (key === NUMBER_AS_INT) point.value = integerOf(this.reader.sfixed64());
    else return false;
    return true;
  }

  /** A `HistogramDataPoint`'s count (4) or sum (5); false for another field. */
  private histogramValue(key: number, point: DecodedMetricPoint): boolean {
    if (key === HISTOGRAM_COUNT) point.count = integerOf(this.reader.fixed64());
    else if (key === HISTOGRAM_SUM) point.value = this.reader.double();
    else return false;
    return true;
  }

  private newPoint(kind: MetricKind, resource: Attributes): DecodedMetricPoint {
    const point: DecodedMetricPoint = {
      resource,
      scopeName: "",
      metric: "",
      unit: "",
      kind,
      temporality: "unspecified",
      monotonic: false,
      attributes: {},
      startTimeUnixNano: null,
      timeUnixNano: null,
      value: null,
      count: null,
      noRecordedValue: false,
      index: this.decoded.points.length,
    };
    this.decoded.points.push(point);
    return point;
  }
}

/** A 64-bit integer as read: a number when safe, else its decimal text (out of range later). */
function integerOf(value: bigint | string): number | string {
  const big = BigInt(value);
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(big)
    : big.toString();
}
