/**
 * What an export sent that stored nothing, as ingest counts it and the store
 * keeps it (docs/api.md §4.17).
 *
 * @module
 */
import type { TelemetryAgent } from "../agents.ts";

/**
 * Why a record stored nothing: no mapper knows its agent, its agent's mapper
 * keeps no such event, or it lacked what its event needs (`partialSuccess`).
 */
export type UnmappedReason = "unknown_agent" | "unmapped_event" | "not_kept" | "unusable";

/** Records of one export that stored nothing, grouped by agent, reason and event name. */
export interface UnmappedRecords {
  /** The mapper's agent, or `other` when no mapper applies. */
  agent: TelemetryAgent | "other";
  /** The version the records report, as the agent's mapping reads it (`""` for none). */
  agentVersion: string;
  reason: UnmappedReason;
  /** The record's event name (a span's name), as sent. */
  eventName: string;
  count: number;
}
