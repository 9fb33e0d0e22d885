/**
 * A kept metric point as its `metric_points` row (issue #18), the same on
 * both engines: the sender's organization and actor, the series id and the
 * row id that make a retried export store nothing twice.
 *
 * @module
 */
import { metricPointIdOf, type MetricSample, seriesIdOf } from "../ingest/metrics/mod.ts";
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
