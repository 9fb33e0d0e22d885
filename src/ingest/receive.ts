/**
 * One OTLP export request from body to events: decode, map each record with
 * its agent's mapper, and count what was unusable for `partialSuccess`.
 *
 * @module
 */
import { mapRecord } from "./agents/mod.ts";
import { decodeExport, type Encoding, type Signal } from "./otlp/mod.ts";
import type { TelemetryEvent } from "./types.ts";

/** The events of one request and what could not be used. */
export interface ReceivedExport {
  signal: Signal;
  events: TelemetryEvent[];
  records: number;
  unusable: number;
  ignored: number;
  /** The first unusable record's reason, for the partialSuccess message. */
  firstReason: string;
}

/** Decodes and maps one export request body; throws OtlpDecodeError when undecodable. */
export function receiveExport(
  body: Uint8Array,
  options: { encoding: Encoding; pathSignal: Signal },
): ReceivedExport {
  const { signal, records } = decodeExport(body, options);
  const received: ReceivedExport = {
    signal,
    events: [],
    records: records.length,
    unusable: 0,
    ignored: 0,
    firstReason: "",
  };
  for (const record of records) {
    const result = mapRecord(record);
    if (result.status === "mapped") {
      for (const event of result.events) received.events.push(event);
    } else if (result.status === "ignored") {
      received.ignored++;
    } else {
      if (received.unusable === 0) received.firstReason = result.reason;
      received.unusable++;
    }
  }
  return received;
}
