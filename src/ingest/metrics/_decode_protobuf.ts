import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import type { Attributes, AttributeValue } from "../types.ts";
import {
  type DecodedMetricPoint,
  type DecodedMetrics,
  type MetricKind,
  noteUnsupported,
  temporalityOf,
} from "./_point.ts";

/** Deepest nesting of array and kvlist values accepted, as for logs. */
const MAX_VALUE_DEPTH = 64;
/** `DataPointFlags.FLAG_NO_RECORDED_VALUE`. */
const NO_RECORDED_VALUE = 1;

// A leading U+FEFF in a protobuf string is text, not a byte-order mark.
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

function tag(field: number, wireType: WireType): number {
  return (field << 3) | wireType;
}

const LEN = WireType.LengthDelimited;
const I64 = WireType.Bit64;
const VARINT = WireType.Varint;

// Request.resource_metrics, ResourceMetrics.resource, Resource.attributes,
// ScopeMetrics.scope, InstrumentationScope.name, Metric.name, KeyValue.key,
// {Gauge,Sum,Histogram,…}.data_points, ArrayValue.values, KeyValueList.values.
const FIRST_LEN = tag(1, LEN);
// ResourceMetrics.scope_metrics, ScopeMetrics.metrics, KeyValue.value.
const SECOND_LEN = tag(2, LEN);

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

const ANY_STRING = tag(1, LEN);
const ANY_BOOL = tag(2, VARINT);
const ANY_INT = tag(3, VARINT);
const ANY_DOUBLE = tag(4, I64);
const ANY_ARRAY = tag(5, LEN);
const ANY_KVLIST = tag(6, LEN);
const ANY_BYTES = tag(7, LEN);

/**
 * Decodes a protobuf `ExportMetricsServiceRequest`. Throws plain errors on
 * malformed input, which the caller turns into `OtlpDecodeError`.
 */
export function decodeMetricsProtobuf(bytes: Uint8Array): DecodedMetrics {
  return new MetricsDecoder(bytes).request();
}

/** One pass over one request, appending points as they are read. */
class MetricsDecoder {
  private readonly decoded: DecodedMetrics = { points: [], unsupported: [] };
  private readonly reader: BinaryReader;

  constructor(private readonly bytes: Uint8Array) {
    this.reader = new BinaryReader(bytes);
  }

  request(): DecodedMetrics {
    const end = this.reader.len;
    while (this.reader.pos < end) {
      const key = this.reader.uint32();
      if (key === FIRST_LEN) this.resourceMetrics(this.messageEnd());
      else this.skip(key);
    }
    this.expectEnd(end);
    return this.decoded;
  }

  /** `ResourceMetrics`: resource (1), scope_metrics (2). */
  private resourceMetrics(end: number): void {
    // Filled in place, so points read before a late `resource` field still share it.
    const resource: Attributes = {};
    while (this.reader.pos < end) {
      const key = this.reader.uint32();
      if (key === FIRST_LEN) this.attributeList(this.messageEnd(), resource);
      else if (key === SECOND_LEN) this.scopeMetrics(this.messageEnd(), resource);
      else this.skip(key);
    }
    this.expectEnd(end);
  }

  /** `ScopeMetrics`: scope (1), metrics (2). */
  private scopeMetrics(end: number, resource: Attributes): void {
    const first = this.decoded.points.length;
    let scopeName = "";
    while (this.reader.pos < end) {
      const key = this.reader.uint32();
      if (key === FIRST_LEN) scopeName = this.scopeName(this.messageEnd());
      else if (key === SECOND_LEN) this.metric(this.messageEnd(), resource);
      else this.skip(key);
    }
    this.expectEnd(end);
    for (let i = first; i < this.decoded.points.length; i++) {
      this.decoded.points[i]!.scopeName = scopeName;
    }
  }

  /** `InstrumentationScope`: name (1). */
  private scopeName(end: number): string {
    let name = "";
    while (this.reader.pos < end) {
      const key = this.reader.uint32();
      if (key === FIRST_LEN) name = this.string();
      else this.skip(key);
    }
    this.expectEnd(end);
    return name;
  }

  /** `Metric`: name (1), unit (3), and one of gauge (5), sum (7), histogram (9), …. */
  private metric(end: number, resource: Attributes): void {
    const points = this.decoded.points;
    const first = points.length;
    let name = "";
    let unit = "";
    const unsupported: { kind: "exponential_histogram" | "summary"; points: number }[] = [];
    while (this.reader.pos < end) {
      const key = this.reader.uint32();
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
          unsupported.push({ kind: "exponential_histogram", points: this.countPoints() });
          break;
        case METRIC_SUMMARY:
          unsupported.push({ kind: "summary", points: this.countPoints() });
          break;
        default:
          this.skip(key);
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
    while (this.reader.pos < end) {
      const key = this.reader.uint32();
      if (key === FIRST_LEN) {
        const pointEnd = this.messageEnd();
        if (kind === "histogram") this.histogramPoint(pointEnd, resource);
        else this.numberPoint(pointEnd, kind, resource);
      } else if (key === AGGREGATION_TEMPORALITY && kind !== "gauge") {
        temporality = this.reader.int32();
      } else if (key === IS_MONOTONIC && kind === "sum") monotonic = this.reader.bool();
      else this.skip(key);
    }
    this.expectEnd(end);
    const decodedTemporality = kind === "gauge" ? "unspecified" : temporalityOf(temporality);
    for (let i = first; i < points.length; i++) {
      points[i]!.temporality = decodedTemporality;
      points[i]!.monotonic = kind === "histogram" || monotonic;
    }
  }

  /** The number of data points (1) of a data member we do not read. */
  private countPoints(): number {
    const end = this.messageEnd();
    let count = 0;
    while (this.reader.pos < end) {
      const key = this.reader.uint32();
      if (key === FIRST_LEN) {
        count++;
        this.reader.pos = this.messageEnd();
      } else this.skip(key);
    }
    this.expectEnd(end);
    return count;
  }

  /** `NumberDataPoint`: attributes (7), start (2), time (3), as_double (4), as_int (6), flags (8). */
  private numberPoint(end: number, kind: MetricKind, resource: Attributes): void {
    const point = this.newPoint(kind, resource);
    while (this.reader.pos < end) {
      const key = this.reader.uint32();
      switch (key) {
        case NUMBER_ATTRIBUTES:
          this.keyValue(this.messageEnd(), point.attributes, 0);
          break;
        case POINT_START_TIME:
          point.startTimeUnixNano = this.time();
          break;
        case POINT_TIME:
          point.timeUnixNano = this.time();
          break;
        case NUMBER_AS_DOUBLE:
          point.value = this.reader.double();
          break;
        case NUMBER_AS_INT:
          point.value = integerOf(this.reader.sfixed64());
          break;
        case NUMBER_FLAGS:
          point.noRecordedValue = (this.reader.uint32() & NO_RECORDED_VALUE) !== 0;
          break;
        default:
          this.skip(key);
      }
    }
    this.expectEnd(end);
  }

  /** `HistogramDataPoint`: attributes (9), start (2), time (3), count (4), sum (5), flags (10). */
  private histogramPoint(end: number, resource: Attributes): void {
    const point = this.newPoint("histogram", resource);
    point.count = 0;
    while (this.reader.pos < end) {
      const key = this.reader.uint32();
      switch (key) {
        case HISTOGRAM_ATTRIBUTES:
          this.keyValue(this.messageEnd(), point.attributes, 0);
          break;
        case POINT_START_TIME:
          point.startTimeUnixNano = this.time();
          break;
        case POINT_TIME:
          point.timeUnixNano = this.time();
          break;
        case HISTOGRAM_COUNT:
          point.count = integerOf(this.reader.fixed64());
          break;
        case HISTOGRAM_SUM:
          point.value = this.reader.double();
          break;
        case HISTOGRAM_FLAGS:
          point.noRecordedValue = (this.reader.uint32() & NO_RECORDED_VALUE) !== 0;
          break;
        default:
          this.skip(key);
      }
    }
    this.expectEnd(end);
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

  /** A list of `KeyValue`s (field 1 of `Resource`) into `into`. */
  private attributeList(end: number, into: Attributes): void {
    while (this.reader.pos < end) {
      const key = this.reader.uint32();
      if (key === FIRST_LEN) this.keyValue(this.messageEnd(), into, 0);
      else this.skip(key);
    }
    this.expectEnd(end);
  }

  /** `KeyValue`: key (1), value (2), stored into `into`. */
  private keyValue(end: number, into: Attributes, depth: number): void {
    let name = "";
    let value: AttributeValue = null;
    while (this.reader.pos < end) {
      const key = this.reader.uint32();
      if (key === FIRST_LEN) name = this.string();
      else if (key === SECOND_LEN) value = this.anyValue(this.messageEnd(), depth);
      else this.skip(key);
    }
    this.expectEnd(end);
    if (name === "__proto__") {
      Object.defineProperty(into, name, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else into[name] = value;
  }

  /** `AnyValue`: one of string, bool, int, double, array, kvlist, bytes (as hex); null when unset. */
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
          value = integerOf(reader.int64());
          break;
        case ANY_BOOL:
          value = reader.bool();
          break;
        case ANY_DOUBLE:
          value = reader.double();
          break;
        case ANY_ARRAY:
        case ANY_KVLIST: {
          if (depth >= MAX_VALUE_DEPTH) {
            throw new Error(`values nested deeper than ${MAX_VALUE_DEPTH}`);
          }
          const listEnd = this.messageEnd();
          if (key === ANY_ARRAY) {
            const values: AttributeValue[] = [];
            while (reader.pos < listEnd) {
              const item = reader.uint32();
              if (item === FIRST_LEN) values.push(this.anyValue(this.messageEnd(), depth + 1));
              else this.skip(item);
            }
            value = values;
          } else {
            const values: Attributes = {};
            while (reader.pos < listEnd) {
              const item = reader.uint32();
              if (item === FIRST_LEN) this.keyValue(this.messageEnd(), values, depth + 1);
              else this.skip(item);
            }
            value = values;
          }
          this.expectEnd(listEnd);
          break;
        }
        case ANY_BYTES: {
          const bytesEnd = this.messageEnd();
          let hex = "";
          for (let i = reader.pos; i < bytesEnd; i++) {
            hex += this.bytes[i]!.toString(16).padStart(2, "0");
          }
          reader.pos = bytesEnd;
          value = hex;
          break;
        }
        default:
          this.skip(key);
      }
    }
    this.expectEnd(end);
    return value;
  }

  /** A fixed64 nanosecond time; null when 0. */
  private time(): bigint | null {
    const time = BigInt(this.reader.fixed64());
    return time === 0n ? null : time;
  }

  /** A string field: UTF-8, invalid sequences replaced (as protobuf-es does). */
  private string(): string {
    const end = this.messageEnd();
    const text = utf8.decode(this.bytes.subarray(this.reader.pos, end));
    this.reader.pos = end;
    return text;
  }

  /** Reads a length prefix and returns where the value ends. */
  private messageEnd(): number {
    const length = this.reader.uint32();
    const end = this.reader.pos + length;
    if (end > this.reader.len) {
      throw new Error("length-delimited field runs past the end of the body");
    }
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

/** A 64-bit integer as read: a number when safe, else its decimal text (out of range later). */
function integerOf(value: bigint | string): number | string {
  const big = BigInt(value);
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(big)
    : big.toString();
}
