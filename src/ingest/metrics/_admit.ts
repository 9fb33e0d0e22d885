import { NamedError } from "../../errors.ts";
import { GENAI_METRIC_PREFIX, METRIC_SESSION_KEYS, recogniseAgent } from "../../agents.ts";
import { ID_MAX_BYTES, MAX_INTEGER, NAME_MAX_BYTES, utf8Bytes, utf8Prefix } from "../limits.ts";
import type { Attributes, AttributeValue } from "../../model/telemetry.ts";
import type { MetricAgent, MetricSample } from "../../model/metrics.ts";
import { DIMENSIONS, instrumentOf, type InstrumentSpec } from "./instruments.ts";

export type { MetricSample };
import type { DecodedMetricPoint } from "./_point.ts";
import { seriesKeyOf } from "./_series.ts";

/**
 * Latest point time stored: 2^63−1 ns (2262-04-11), so times fit a signed
 * 64-bit column on every engine and order points exactly (milliseconds
 * could tie).
 */
export const METRIC_TIME_MAX_NS = (1n << 63n) - 1n;

/** Why a point stored nothing although it was fine. */
export type IgnoredReason =
  | "unknown_agent"
  | "unknown_instrument"
  | "skipped_instrument"
  | "no_recorded_value";

/** What became of one decoded point. */
export type AdmittedPoint =
  | { status: "kept"; sample: MetricSample }
  | { status: "ignored"; agent: MetricAgent | "other"; reason: IgnoredReason }
  | { status: "unusable"; agent: MetricAgent | "other"; reason: string };

/**
 * The agent a point comes from: by resource `service.name` as for logs,
 * else by its instrument's prefix (a user may override the service name);
 * `gen_ai.*` instruments of an unknown service follow the GenAI conventions.
 */
export function metricAgentOf(point: DecodedMetricPoint): MetricAgent | undefined {
  return recogniseAgent({ service: point.resource["service.name"], name: point.metric }) ??
    (point.metric.startsWith(GENAI_METRIC_PREFIX) ? "genai" : undefined);
}

/**
 * Holds one decoded point to the instrument table and the limits: `kept`
 * with its sample; `ignored` when it is of no instrument we keep (counted,
 * not stored) or marked as carrying no value; `unusable` with the reason
 * when a time, number or text is out of range or the point does not have
 * the shape its instrument is specified with.
 */
export function admitPoint(point: DecodedMetricPoint): AdmittedPoint {
  const agent = metricAgentOf(point);
  if (agent === undefined) return { status: "ignored", agent: "other", reason: "unknown_agent" };
  const spec = instrumentOf(agent, point.metric);
  if (spec === undefined) return { status: "ignored", agent, reason: "unknown_instrument" };
  if (!("measure" in spec)) return { status: "ignored", agent, reason: "skipped_instrument" };
  if (point.noRecordedValue) return { status: "ignored", agent, reason: "no_recorded_value" };
  const reason = shapeReason(point, spec);
  if (reason !== undefined) return { status: "unusable", agent, reason };
  try {
    return { status: "kept", sample: sampleOf(point, spec, agent) };
  } catch (error) {
    if (error instanceof PointRangeError) {
      return { status: "unusable", agent, reason: error.message };
    }
    throw error;
  }
}

/** A value of a point out of its range; the point is unusable with this message. */
class PointRangeError extends NamedError {}

function shapeReason(point: DecodedMetricPoint, spec: InstrumentSpec): string | undefined {
  if (point.kind !== spec.kind) {
    return `${spec.instrument} sent as a ${point.kind}: expected a ${spec.kind}`;
  }
  if (point.temporality === "unspecified") {
    return `${spec.instrument}: aggregation temporality unspecified`;
  }
  return undefined;
}

function sampleOf(
  point: DecodedMetricPoint,
  spec: InstrumentSpec,
  agent: MetricAgent,
): MetricSample {
  const timeNs = pointTime(point.timeUnixNano, "timeUnixNano");
  if (timeNs === null) throw new PointRangeError("a data point has no timeUnixNano");
  const startTimeNs = pointTime(point.startTimeUnixNano, "startTimeUnixNano");
  if (startTimeNs !== null && startTimeNs > timeNs) {
    throw new PointRangeError("startTimeUnixNano is after timeUnixNano");
  }
  const dimensions = { type: "", model: "", tool: "", decision: "", language: "" };
  for (const dimension of DIMENSIONS) {
    const text = textOf(firstOf(point.attributes, spec.dimensions[dimension]));
    dimensions[dimension] = capped(
      spec.values?.[dimension]?.[text] ?? text,
      NAME_MAX_BYTES,
      dimension,
    );
  }
  const version = point.resource["app.version"] ??
    (agent === "gemini-cli" ? null : point.resource["service.version"]);
  return {
    agent,
    agentSystem: capped(textOf(point.resource["service.name"]), NAME_MAX_BYTES, "service.name"),
    agentVersion: utf8Prefix(textOf(version ?? null), NAME_MAX_BYTES),
    sessionId: capped(
      textOf(
        firstOf(point.attributes, METRIC_SESSION_KEYS[agent]) ??
          firstOf(point.resource, METRIC_SESSION_KEYS[agent]),
      ),
      ID_MAX_BYTES,
      "session id",
    ),
    instrument: spec.instrument,
    measure: spec.measure,
    dimensions,
    temporality: point.temporality === "delta" ? "delta" : "cumulative",
    monotonic: point.monotonic,
    startTimeNs,
    timeNs,
    timeMs: Number(timeNs / 1_000_000n),
    value: valueOf(point, spec),
    seriesKey: seriesKeyOf(point),
  };
}

/** A point time within range, or null when absent. */
function pointTime(ns: bigint | null, what: string): bigint | null {
  if (ns !== null && ns > METRIC_TIME_MAX_NS) {
    throw new PointRangeError(`${what} out of range: above 2^63-1 ns (2262-04-11)`);
  }
  return ns;
}

/** The number the instrument reads, checked and scaled to the measure's unit. */
function valueOf(point: DecodedMetricPoint, spec: InstrumentSpec): number {
  const what = spec.reads === "count" ? "count" : spec.reads === "sum" ? "sum" : "value";
  const raw = spec.reads === "count" ? point.count : point.value;
  if (raw === null) throw new PointRangeError(`${spec.instrument}: a data point has no ${what}`);
  const value = typeof raw === "number" ? raw : NaN;
  if (!(Math.abs(value) <= MAX_INTEGER)) {
    throw new PointRangeError(
      `${spec.instrument} ${what} out of range: ${preview(raw)} (-2^53+1 to 2^53-1 accepted)`,
    );
  }
  if (point.monotonic && value < 0) {
    throw new PointRangeError(
      `${spec.instrument} ${what} out of range: ${value} (a monotonic sum is never negative)`,
    );
  }
  return spec.scale === undefined ? value : value * spec.scale;
}

function firstOf(
  attributes: Attributes,
  keys: readonly string[] | undefined,
): AttributeValue | undefined {
  if (keys === undefined) return undefined;
  // Text only from scalars, as for logs and spans (`agents/_coerce.ts`): an array or
  // kvlist is absent, and the next key (or the resource) is tried.
  for (const key of keys) {
    const value = attributes[key];
    if (
      typeof value === "string"
        ? value !== ""
        : typeof value === "number" || typeof value === "boolean"
    ) {
      return value;
    }
  }
  return undefined;
}

/** A scalar attribute as text (`true`, `42`), NUL replaced as for logs; `""` otherwise. */
function textOf(value: AttributeValue | undefined): string {
  if (typeof value === "string") return value.replaceAll("\u0000", "\ufffd");
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return "";
}

/** `text`, unless it is over `bytes`: it names a group or joins rows, so it is not cut. */
function capped(text: string, bytes: number, what: string): string {
  if (text.length * 3 <= bytes) return text;
  const size = utf8Bytes(text);
  if (size <= bytes) return text;
  throw new PointRangeError(`${what} too long: ${size} bytes (at most ${bytes} accepted)`);
}

function preview(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
