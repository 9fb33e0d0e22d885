/**
 * Writes OTLP/JSON-shaped export requests as OTLP protobuf (field numbers
 * from opentelemetry-proto common/resource/logs/trace v1): the protobuf
 * payloads of the tests and the benchmark.
 *
 * @module
 */
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

export type JsonAnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values: JsonAnyValue[] };
  kvlistValue?: { values: JsonKeyValue[] };
  bytesValue?: string;
};
export type JsonKeyValue = { key: string; value?: JsonAnyValue };
export type JsonLogRecord = {
  timeUnixNano?: string;
  observedTimeUnixNano?: string;
  severityNumber?: number;
  severityText?: string;
  body?: JsonAnyValue;
  attributes?: JsonKeyValue[];
  flags?: number;
  traceId?: string;
  spanId?: string;
  eventName?: string;
};
export type JsonSpan = {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  kind?: number;
  startTimeUnixNano?: string;
  endTimeUnixNano?: string;
  attributes?: JsonKeyValue[];
  events?: { timeUnixNano: string; name: string; attributes?: JsonKeyValue[] }[];
  status?: { message?: string; code?: number };
};
export type JsonResource = { attributes: JsonKeyValue[] };
export type JsonScope = { name: string; version?: string };
export type JsonLogsRequest = {
  resourceLogs: {
    resource?: JsonResource;
    scopeLogs: { scope?: JsonScope; logRecords: JsonLogRecord[] }[];
  }[];
};
export type JsonTracesRequest = {
  resourceSpans: {
    resource?: JsonResource;
    scopeSpans: { scope?: JsonScope; spans: JsonSpan[] }[];
  }[];
};

const LEN = WireType.LengthDelimited;

/** Writes fields no OTLP message defines, of every wire type, which decoders must skip. */
function writeUnknownFields(w: BinaryWriter): void {
  w.tag(1000, WireType.Varint).int64(-5n);
  w.tag(1001, WireType.Bit64).fixed64(123456789n);
  w.tag(1002, LEN).bytes(new Uint8Array([1, 2, 3]));
  w.tag(1003, WireType.Bit32).fixed32(7);
  w.tag(1004, WireType.StartGroup);
  w.tag(1, WireType.Varint).uint32(1);
  w.tag(1004, WireType.EndGroup);
}

class ProtobufPayload {
  readonly w = new BinaryWriter();
  constructor(readonly unknownFields = false) {}

  private message(field: number, write: () => void): void {
    this.w.tag(field, LEN).fork();
    if (this.unknownFields) writeUnknownFields(this.w);
    write();
    this.w.join();
  }

  anyValue(field: number, value: JsonAnyValue): void {
    this.message(field, () => {
      const w = this.w;
      if (value.stringValue !== undefined) w.tag(1, LEN).string(value.stringValue);
      if (value.boolValue !== undefined) w.tag(2, WireType.Varint).bool(value.boolValue);
      if (value.intValue !== undefined) w.tag(3, WireType.Varint).int64(value.intValue);
      if (value.doubleValue !== undefined) w.tag(4, WireType.Bit64).double(value.doubleValue);
      if (value.arrayValue !== undefined) {
        this.message(5, () => value.arrayValue!.values.forEach((item) => this.anyValue(1, item)));
      }
      if (value.kvlistValue !== undefined) {
        this.message(6, () => value.kvlistValue!.values.forEach((kv) => this.keyValue(1, kv)));
      }
      if (value.bytesValue !== undefined) {
        w.tag(7, LEN).bytes(Uint8Array.from(atob(value.bytesValue), (c) => c.charCodeAt(0)));
      }
    });
  }

  keyValue(field: number, kv: JsonKeyValue): void {
    this.message(field, () => {
      this.w.tag(1, LEN).string(kv.key);
      if (kv.value !== undefined) this.anyValue(2, kv.value);
    });
  }

  resource(resource: JsonResource | undefined): void {
    if (resource === undefined) return;
    this.message(1, () => resource.attributes.forEach((kv) => this.keyValue(1, kv)));
  }

  scope(scope: JsonScope | undefined): void {
    if (scope === undefined) return;
    this.message(1, () => {
      this.w.tag(1, LEN).string(scope.name);
      if (scope.version !== undefined) this.w.tag(2, LEN).string(scope.version);
    });
  }

  id(field: number, hex: string | undefined): void {
    if (hex === undefined) return;
    this.w.tag(field, LEN).bytes(Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16)));
  }

  logs(request: JsonLogsRequest): Uint8Array {
    const w = this.w;
    if (this.unknownFields) writeUnknownFields(w);
    for (const resourceLogs of request.resourceLogs) {
      this.message(1, () => {
        this.resource(resourceLogs.resource);
        for (const scopeLogs of resourceLogs.scopeLogs) {
          this.message(2, () => {
            this.scope(scopeLogs.scope);
            for (const r of scopeLogs.logRecords) {
              this.message(2, () => {
                if (r.timeUnixNano !== undefined) w.tag(1, WireType.Bit64).fixed64(r.timeUnixNano);
                if (r.severityNumber !== undefined) {
                  w.tag(2, WireType.Varint).int32(r.severityNumber);
                }
                if (r.severityText !== undefined) w.tag(3, LEN).string(r.severityText);
                if (r.body !== undefined) this.anyValue(5, r.body);
                r.attributes?.forEach((kv) => this.keyValue(6, kv));
                if (r.flags !== undefined) w.tag(8, WireType.Bit32).fixed32(r.flags);
                this.id(9, r.traceId);
                this.id(10, r.spanId);
                if (r.observedTimeUnixNano !== undefined) {
                  w.tag(11, WireType.Bit64).fixed64(r.observedTimeUnixNano);
                }
                if (r.eventName !== undefined) w.tag(12, LEN).string(r.eventName);
              });
            }
          });
        }
      });
    }
    return w.finish();
  }

  traces(request: JsonTracesRequest): Uint8Array {
    const w = this.w;
    if (this.unknownFields) writeUnknownFields(w);
    for (const resourceSpans of request.resourceSpans) {
      this.message(1, () => {
        this.resource(resourceSpans.resource);
        for (const scopeSpans of resourceSpans.scopeSpans) {
          this.message(2, () => {
            this.scope(scopeSpans.scope);
            for (const s of scopeSpans.spans) {
              this.message(2, () => {
                this.id(1, s.traceId);
                this.id(2, s.spanId);
                this.id(4, s.parentSpanId);
                if (s.name !== undefined) w.tag(5, LEN).string(s.name);
                if (s.kind !== undefined) w.tag(6, WireType.Varint).int32(s.kind);
                if (s.startTimeUnixNano !== undefined) {
                  w.tag(7, WireType.Bit64).fixed64(s.startTimeUnixNano);
                }
                if (s.endTimeUnixNano !== undefined) {
                  w.tag(8, WireType.Bit64).fixed64(s.endTimeUnixNano);
                }
                s.attributes?.forEach((kv) => this.keyValue(9, kv));
                for (const event of s.events ?? []) {
                  this.message(11, () => {
                    w.tag(1, WireType.Bit64).fixed64(event.timeUnixNano);
                    w.tag(2, LEN).string(event.name);
                    event.attributes?.forEach((kv) => this.keyValue(3, kv));
                  });
                }
                if (s.status !== undefined) {
                  const status = s.status;
                  this.message(15, () => {
                    if (status.message !== undefined) w.tag(2, LEN).string(status.message);
                    if (status.code !== undefined) w.tag(3, WireType.Varint).int32(status.code);
                  });
                }
              });
            }
          });
        }
      });
    }
    return w.finish();
  }
}

export function protobufLogs(request: JsonLogsRequest, unknownFields = false): Uint8Array {
  return new ProtobufPayload(unknownFields).logs(request);
}

export function protobufTraces(request: JsonTracesRequest, unknownFields = false): Uint8Array {
  return new ProtobufPayload(unknownFields).traces(request);
}
