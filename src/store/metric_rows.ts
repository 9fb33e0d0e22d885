/**
 * A kept metric point as its `metric_points` row (issue #18), the same on
 * both engines: the sender's organization and actor, the series id and the
 * row id that make a retried export store nothing twice.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { MetricSample } from "../model/metrics.ts";
import type { Sender } from "./stores.ts";
import type { MetricPointRow } from "./table_columns.ts";

/** The row of one kept point, written with `seq`. */
export function metricPointRow(sender: Sender, sample: MetricSample, seq: number): MetricPointRow {
  const { dimensions } = sample;
  return {
    id: metricPointIdOf(sender, sample),
    org_id: sender.orgId,
    seq,
    actor_id: sender.actorId,
    agent: sample.agent,
    agent_system: sample.agentSystem,
    agent_version: sample.agentVersion,
    session_id: sample.sessionId,
    instrument: sample.instrument,
    measure: sample.measure,
    type: dimensions.type,
    model: dimensions.model,
    tool: dimensions.tool,
    decision: dimensions.decision,
    language: dimensions.language,
    temporality: sample.temporality,
    monotonic: sample.monotonic ? 1 : 0,
    series_id: seriesIdOf(sender, sample),
    start_time_ns: sample.startTimeNs === null ? null : String(sample.startTimeNs),
    time_ns: String(sample.timeNs),
    ts: sample.timeMs,
    value: sample.value,
  };
}

/** A series' stored id: its key within the sender's organization and actor (32 hex). */
export function seriesIdOf(sender: Sender, sample: MetricSample): string {
  return hex(`${sender.orgId}\u0000${sender.actorId}\u0000${sample.seriesKey}`, 32);
}

/**
 * A point's row id: its series, start time and time. An exporter's retry
 * repeats all three, so it stores nothing twice; a later point of the same
 * series differs in its time.
 */
export function metricPointIdOf(sender: Sender, sample: MetricSample): string {
  const series = seriesIdOf(sender, sample);
  return `mp_${series.slice(0, 12)}${
    hex(`${series}\u0000${sample.startTimeNs ?? ""}\u0000${sample.timeNs}`, 20)
  }`;
}

function hex(text: string, digits: number): string {
  return createHash("sha256").update(text).digest("hex").slice(0, digits);
}
