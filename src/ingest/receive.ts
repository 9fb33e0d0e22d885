/**
 * One OTLP export request from body to events: decode, map each record with
 * its agent's mapper, and count what was unusable for `partialSuccess`.
 *
 * @module
 */
import { mapperOf, mapRecord, reportedAgentVersion } from "./agents/mod.ts";
import { DimensionCollector, type SessionDimension } from "./dimensions.ts";
import { mapWithinLimits } from "./limits.ts";
import { decodeExport, type Encoding, type Signal } from "./otlp/mod.ts";
import type { OtlpRecord, TelemetryEvent } from "../model/telemetry.ts";
import type { UnmappedReason, UnmappedRecords } from "../model/unmapped.ts";

export type { UnmappedReason, UnmappedRecords };

/** The events of one request and what could not be used. */
export interface ReceivedExport {
  signal: Signal;
  events: TelemetryEvent[];
  records: number;
  unusable: number;
  ignored: number;
  /** The first unusable record's reason, for the partialSuccess message. */
  firstReason: string;
  /** Every record that stored nothing, so an operator can see what an agent sends that we drop. */
  unmapped: UnmappedRecords[];
  /** The configured resource attributes of the sessions its events belong to. */
  dimensions: SessionDimension[];
}

/** Decodes and maps one export request body; throws OtlpDecodeError when undecodable. */
export function receiveExport(
  body: Uint8Array,
  options: {
    encoding: Encoding;
    pathSignal: Signal;
    /** The resource attributes kept per session (`--dimension`); none when absent. */
    dimensionKeys?: readonly string[];
  },
): ReceivedExport {
  const { signal, records, nulPossible } = decodeExport(body, options);
  const received: ReceivedExport = {
    signal,
    events: [],
    records: records.length,
    unusable: 0,
    ignored: 0,
    firstReason: "",
    unmapped: [],
    dimensions: [],
  };
  const dimensions = new DimensionCollector(options.dimensionKeys ?? []);
  const unmapped = new Map<string, UnmappedRecords>();
  const note = (record: OtlpRecord, reason: UnmappedReason) => {
    const agent = mapperOf(record) ?? "other";
    const agentVersion = reportedAgentVersion(record, agent);
    const key = `${agent}\u0000${agentVersion}\u0000${reason}\u0000${record.eventName}`;
    const entry = unmapped.get(key);
    if (entry) entry.count++;
    else unmapped.set(key, { agent, agentVersion, reason, eventName: record.eventName, count: 1 });
  };
  for (const record of records) {
    const result = mapWithinLimits(record, mapRecord, nulPossible);
    if (result.status === "mapped") {
      for (const event of result.events) received.events.push(event);
      dimensions.add(record, result.events);
    } else if (result.status === "ignored") {
      received.ignored++;
      note(
        record,
        mapperOf(record) === undefined
          ? "unknown_agent"
          : result.known
          ? "not_kept"
          : "unmapped_event",
      );
    } else {
      if (received.unusable === 0) received.firstReason = result.reason;
      received.unusable++;
      note(record, "unusable");
    }
  }
  received.unmapped = [...unmapped.values()];
  received.dimensions = dimensions.dimensions;
  return received;
}
