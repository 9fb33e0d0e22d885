/**
 * OTLP metrics, engine-independent (issue #18): decode an
 * `ExportMetricsServiceRequest` (JSON or protobuf) into points, hold each to
 * the instrument table and the limits, and name its series and row so that
 * a retried export stores nothing twice. What a point adds to its interval
 * is computed from the stored points (`deltas.ts`), not kept in memory.
 *
 * @module
 */
import { agentOfName, GENAI_METRIC_PREFIX } from "../../agents.ts";
import { OtlpDecodeError } from "../otlp/mod.ts";
import type { Encoding } from "../otlp/mod.ts";
import { admitPoint, type IgnoredReason, type MetricSample } from "./_admit.ts";
import { decodeMetricsJson } from "./_decode_json.ts";
import { decodeMetricsProtobuf } from "./_decode_protobuf.ts";
import type { DecodedMetrics, UnsupportedMetric } from "./_point.ts";
import type { MetricAgent } from "./instruments.ts";

export { admitPoint, METRIC_TIME_MAX_NS, metricAgentOf } from "./_admit.ts";
export type { AdmittedPoint, IgnoredReason, MetricSample } from "./_admit.ts";
export { metricsOfJson } from "./_decode_json.ts";
export type {
  DecodedMetricPoint,
  DecodedMetrics,
  MetricKind,
  Temporality,
  UnsupportedMetric,
} from "./_point.ts";
export { seriesKeyOf } from "./_series.ts";
export { deltaOf, intervalDeltas, type SeriesPoint } from "./deltas.ts";
export { DIMENSIONS, instrumentOf, INSTRUMENTS, SKIPPED_INSTRUMENTS } from "./instruments.ts";
export type {
  Dimension,
  InstrumentSpec,
  Measure,
  MetricAgent,
  SkippedInstrument,
} from "./instruments.ts";

/**
 * Decodes a metrics export body; an empty body is an empty request.
 *
 * @throws {OtlpDecodeError} for any body that is not a well-formed export request
 */
export function decodeMetrics(body: Uint8Array, encoding: Encoding): DecodedMetrics {
  if (body.length === 0) return { points: [], unsupported: [] };
  if (encoding === "json") return decodeMetricsJson(body);
  try {
    return decodeMetricsProtobuf(body);
  } catch (error) {
    throw new OtlpDecodeError(
      `Invalid OTLP protobuf: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** Points of one export that stored nothing, by agent and reason (for `/metrics`). */
export interface UnkeptPoints {
  agent: MetricAgent | "other";
  reason: IgnoredReason | "unsupported_kind" | "unusable";
  count: number;
}

/** The kept samples of one export and what was not kept. */
export interface ReceivedMetrics {
  samples: MetricSample[];
  /** Decoded points (unsupported kinds included). */
  points: number;
  /** Points rejected by the limits: the `partialSuccess` count. */
  unusable: number;
  /** The first unusable point's reason, for the `partialSuccess` message. */
  firstReason: string;
  unkept: UnkeptPoints[];
}

/** Holds every point of a decoded export to the instrument table and the limits. */
export function receiveMetrics(decoded: DecodedMetrics): ReceivedMetrics {
  const received: ReceivedMetrics = {
    samples: [],
    points: decoded.points.length,
    unusable: 0,
    firstReason: "",
    unkept: [],
  };
  const unkept = new Map<string, UnkeptPoints>();
  const note = (agent: UnkeptPoints["agent"], reason: UnkeptPoints["reason"], count: number) => {
    const key = `${agent}\u0000${reason}`;
    const entry = unkept.get(key);
    if (entry) entry.count += count;
    else unkept.set(key, { agent, reason, count });
  };
  for (const point of decoded.points) {
    const admitted = admitPoint(point);
    if (admitted.status === "kept") received.samples.push(admitted.sample);
    else if (admitted.status === "ignored") note(admitted.agent, admitted.reason, 1);
    else {
      if (received.unusable === 0) received.firstReason = admitted.reason;
      received.unusable++;
      note(admitted.agent, "unusable", 1);
    }
  }
  for (const unsupported of decoded.unsupported) {
    received.points += unsupported.points;
    note(agentOfUnsupported(unsupported), "unsupported_kind", unsupported.points);
  }
  received.unkept = [...unkept.values()];
  return received;
}

function agentOfUnsupported(unsupported: UnsupportedMetric): MetricAgent | "other" {
  const name = unsupported.metric;
  return agentOfName(name) ?? (name.startsWith(GENAI_METRIC_PREFIX) ? "genai" : "other");
}
