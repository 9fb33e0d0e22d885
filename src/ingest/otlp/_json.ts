import type { Attributes, OtlpRecord } from "../../model/telemetry.ts";
import { idHexOf } from "./_hex.ts";
import { eventNameOf } from "./_record.ts";
import type { Signal } from "./_types.ts";
import {
  anyValue,
  arrayAt,
  attributesInto,
  base64Bytes,
  field,
  type JsonObject,
  objectAt,
  objectOf,
  parseJsonBody,
  shapeError,
  stringAt,
  timeOf,
} from "./json_values.ts";

const HEX = /^[0-9a-fA-F]*$/;
const ALL_ZERO = /^0*$/;
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
): { signal: Signal; records: OtlpRecord[]; nulPossible: boolean } {
  const { root, nulPossible } = parseJsonBody(bytes);

  const present = TOP_KEYS.filter(([, camel, snake]) => root[camel] != null || root[snake] != null);
  const top = present.find(([signal]) => signal === pathSignal) ?? present[0];
  if (top === undefined) return { signal: pathSignal, records: [], nulPossible };
  const [signal, camel, snake] = top;
  const resourceEntries = arrayAt(root, camel, snake);
  const records: OtlpRecord[] = [];
  if (signal === "metrics") {
    for (const entry of resourceEntries) objectOf(entry, camel);
  } else {
    for (const entry of resourceEntries) resourceEntry(entry, signal, records);
  }
  return { signal, records, nulPossible };
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
