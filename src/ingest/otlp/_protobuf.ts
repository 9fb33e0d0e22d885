import type { Attributes, AttributeValue, OtlpRecord } from "../../model/telemetry.ts";
import { eventNameOf } from "./_record.ts";
import type { Signal } from "./_types.ts";
import {
  FIRST_LEN,
  I32,
  I64,
  LEN,
  type MessageSchema,
  messageSchema,
  OtlpWireReader,
  SECOND_LEN,
  tag,
  VARINT,
} from "./wire_reader.ts";

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

// Every field of the messages read (opentelemetry-proto collector, logs and
// trace v1), read or not: one in another wire type is malformed.
const EXPORT_REQUEST: Record<Signal, MessageSchema> = {
  logs: messageSchema("ExportLogsServiceRequest", { 1: LEN }),
  traces: messageSchema("ExportTraceServiceRequest", { 1: LEN }),
  metrics: messageSchema("ExportMetricsServiceRequest", { 1: LEN }),
};
const RESOURCE_LOGS = messageSchema("ResourceLogs", { 1: LEN, 2: LEN, 3: LEN });
const RESOURCE_SPANS = messageSchema("ResourceSpans", { 1: LEN, 2: LEN, 3: LEN });
const SCOPE_LOGS = messageSchema("ScopeLogs", { 1: LEN, 2: LEN, 3: LEN });
const SCOPE_SPANS = messageSchema("ScopeSpans", { 1: LEN, 2: LEN, 3: LEN });
const LOG_RECORD = messageSchema("LogRecord", {
  1: I64,
  2: VARINT,
  3: LEN,
  5: LEN,
  6: LEN,
  7: VARINT,
  8: I32,
  9: LEN,
  10: LEN,
  11: I64,
  12: LEN,
});
const SPAN = messageSchema("Span", {
  1: LEN,
  2: LEN,
  3: LEN,
  4: LEN,
  5: LEN,
  6: VARINT,
  7: I64,
  8: I64,
  9: LEN,
  10: VARINT,
  11: LEN,
  12: VARINT,
  13: LEN,
  14: VARINT,
  15: LEN,
  16: I32,
});
const STATUS = messageSchema("Status", { 2: LEN, 3: VARINT });

/**
 * Decodes a protobuf `ExportLogsServiceRequest` or `ExportTraceServiceRequest`
 * into records; a metrics request is only checked for framing. Throws plain
 * errors on malformed input, which the caller turns into `OtlpDecodeError`.
 */
export function decodeProtobuf(
  bytes: Uint8Array,
  signal: Signal,
): { records: OtlpRecord[]; nulPossible: boolean } {
  const decoder = new ProtobufDecoder(bytes);
  decoder.request(signal);
  return { records: decoder.records, nulPossible: decoder.nulPossible };
}

/** One pass over one request, appending records as they are read. */
class ProtobufDecoder extends OtlpWireReader {
  readonly records: OtlpRecord[] = [];

  /** The request of `signal`: its records, or, for metrics, only its framing checked. */
  request(signal: Signal): void {
    if (signal === "logs") this.exportRequest(EXPORT_REQUEST.logs, this.resourceLogs);
    else if (signal === "traces") this.exportRequest(EXPORT_REQUEST.traces, this.resourceSpans);
    else this.exportRequest(EXPORT_REQUEST.metrics, this.skipMessage);
  }

  /** `ResourceLogs`: resource (1), scope_logs (2). */
  private resourceLogs(end: number): void {
    this.resourceEntry(end, RESOURCE_LOGS, (scopeEnd, resource) => {
      this.scopeEntries(scopeEnd, SCOPE_LOGS, resource, this.logRecord);
    });
  }

  /** `ResourceSpans`: resource (1), scope_spans (2). */
  private resourceSpans(end: number): void {
    this.resourceEntry(end, RESOURCE_SPANS, (scopeEnd, resource) => {
      this.scopeEntries(scopeEnd, SCOPE_SPANS, resource, this.span);
    });
  }

  private skipMessage(end: number): void {
    this.reader.pos = end;
  }

  /** `ScopeLogs` / `ScopeSpans`: scope (1), log_records / spans (2). */
  private scopeEntries(
    end: number,
    scope: MessageSchema,
    resource: Attributes,
    entry: (this: ProtobufDecoder, end: number, resource: Attributes, scopeName: string) => void,
  ): void {
    const reader = this.reader;
    const first = this.records.length;
    let scopeName = "";
    let scopeLate = false;
    while (reader.pos < end) {
      const key = this.nextTag();
      if (key === SECOND_LEN) entry.call(this, this.messageEnd(), resource, scopeName);
      else if (key === FIRST_LEN) {
        scopeName = this.scopeName(this.messageEnd());
        scopeLate = this.records.length > first;
      } else this.skipField(key, scope);
    }
    this.expectEnd(end);
    if (scopeLate) {
      for (let i = first; i < this.records.length; i++) this.records[i]!.scopeName = scopeName;
    }
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
      const key = this.nextTag();
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
          this.skipField(key, LOG_RECORD);
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
      const key = this.nextTag();
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
            const statusKey = this.nextTag();
            if (statusKey === STATUS_CODE) statusCode = reader.int32();
            else if (statusKey === STATUS_MESSAGE) statusMessage = this.string();
            else this.skipField(statusKey, STATUS);
          }
          this.expectEnd(statusEnd);
          break;
        }
        default:
          this.skipField(key, SPAN);
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
}
