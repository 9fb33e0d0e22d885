/**
 * Rows of `unmapped_events`: what one export sent that stored nothing, per
 * actor, agent, version, event name and reason (the drift a new agent
 * release brings). Names are the sender's text: bounded as every name is.
 *
 * @module
 */
import { NAME_MAX_BYTES, utf8Prefix } from "../model/text.ts";
import type { UnmappedRecords } from "../model/unmapped.ts";
import type { Sender } from "./stores.ts";

/** The values of `note_unmapped`, in its parameter order. */
export type UnmappedRow = [
  orgId: string,
  actorId: string,
  agent: string,
  agentVersion: string,
  eventName: string,
  reason: string,
  records: number,
  seenMs: number,
];

/** One row per group of an export's unmapped records, received at `nowMs`. */
export function unmappedRows(
  sender: Sender,
  unmapped: readonly UnmappedRecords[],
  nowMs: number,
): UnmappedRow[] {
  // Names cut to their bound may meet: such groups are one row.
  const rows = new Map<string, UnmappedRow>();
  for (const note of unmapped) {
    const version = utf8Prefix(note.agentVersion, NAME_MAX_BYTES);
    const name = utf8Prefix(note.eventName, NAME_MAX_BYTES);
    const key = `${note.agent}\u0000${version}\u0000${name}\u0000${note.reason}`;
    const row = rows.get(key);
    if (row) row[6] += note.count;
    else {
      rows.set(key, [
        sender.orgId,
        sender.actorId,
        note.agent,
        version,
        name,
        note.reason,
        note.count,
        nowMs,
      ]);
    }
  }
  return [...rows.values()];
}
