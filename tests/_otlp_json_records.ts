/**
 * Test helper: turns an OTLP/JSON export request (logs or traces) into the
 * {@link OtlpRecord}s the agent mappers take, following the record contract
 * of `src/model/telemetry.ts`. Only for tests of the mappers; the real decoder
 * lives in `src/ingest/otlp/`.
 *
 * @module
 */

import type { Attributes, AttributeValue, OtlpRecord } from "../src/model/telemetry.ts";

type Json = Record<string, unknown>;

/** Reads a fixture under `tests/fixtures/agents/` and returns its records. */
export async function fixtureRecords(name: string): Promise<OtlpRecord[]> {
  const url = new URL(`./fixtures/agents/${name}`, import.meta.url);
  return otlpJsonRecords(JSON.parse(await Deno.readTextFile(url)));
}

/** The records of an `ExportLogsServiceRequest` or `ExportTraceServiceRequest` body. */
export function otlpJsonRecords(body: unknown): OtlpRecord[] {
  const out: OtlpRecord[] = [];
  const root = body as Json;
  for (const rl of list(root.resourceLogs)) {
    const resource = attributesOf((rl.resource as Json | undefined)?.attributes);
    for (const sl of list(rl.scopeLogs)) {
      const scopeName = str((sl.scope as Json | undefined)?.name);
      for (const lr of list(sl.logRecords)) {
        const attributes = attributesOf(lr.attributes);
        const body = lr.body === undefined ? null : anyValue(lr.body as Json);
        const fromAttr = attributes["event.name"];
        out.push({
          signal: "logs",
          resource,
          scopeName,
          eventName: (typeof fromAttr === "string" && fromAttr !== "" ? fromAttr : "") ||
            str(lr.eventName) || (typeof body === "string" ? body : ""),
          attributes,
          body,
          timeUnixNano: nanos(lr.timeUnixNano),
          observedTimeUnixNano: nanos(lr.observedTimeUnixNano),
          traceId: hexId(lr.traceId),
          spanId: hexId(lr.spanId),
          statusCode: null,
          statusMessage: "",
          index: out.length,
        });
      }
    }
  }
  for (const rs of list(root.resourceSpans)) {
    const resource = attributesOf((rs.resource as Json | undefined)?.attributes);
    for (const ss of list(rs.scopeSpans)) {
      const scopeName = str((ss.scope as Json | undefined)?.name);
      for (const span of list(ss.spans)) {
        const status = (span.status ?? {}) as Json;
        out.push({
          signal: "traces",
          resource,
          scopeName,
          eventName: str(span.name),
          attributes: attributesOf(span.attributes),
          body: null,
          timeUnixNano: nanos(span.startTimeUnixNano),
          observedTimeUnixNano: nanos(span.endTimeUnixNano),
          traceId: hexId(span.traceId),
          spanId: hexId(span.spanId),
          statusCode: status.code === undefined ? 0 : Number(status.code),
          statusMessage: str(status.message),
          index: out.length,
        });
      }
    }
  }
  return out;
}

function list(value: unknown): Json[] {
  return Array.isArray(value) ? (value as Json[]) : [];
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function nanos(value: unknown): bigint | null {
  if (value === undefined || value === null || value === "") return null;
  const n = BigInt(value as string | number);
  return n === 0n ? null : n;
}

function hexId(value: unknown): string {
  const s = str(value).toLowerCase();
  for (let i = 0; i < s.length; i++) if (s[i] !== "0") return s;
  return "";
}

function attributesOf(value: unknown): Attributes {
  const out: Attributes = {};
  for (const kv of list(value)) out[str(kv.key)] = anyValue((kv.value ?? {}) as Json);
  return out;
}

function anyValue(v: Json): AttributeValue {
  if ("stringValue" in v) return str(v.stringValue);
  if ("boolValue" in v) return v.boolValue === true;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("arrayValue" in v) {
    return list((v.arrayValue as Json | undefined)?.values).map(anyValue);
  }
  if ("kvlistValue" in v) return attributesOf((v.kvlistValue as Json | undefined)?.values);
  if ("bytesValue" in v) return str(v.bytesValue);
  return null;
}
