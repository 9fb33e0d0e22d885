/**
 * A call's time (docs/design.md §6.2 "A tool call's time"): the `event.timestamp`
 * attribute (ISO 8601) when present and parsable, else the record's `timeUnixNano`, else its
 * `observedTimeUnixNano` (a time of 0 is absent; the decoder gives null).
 * Spans carry no `event.timestamp`; their start time is the call's time.
 * Every time a record carries must be in range (`../limits.ts`), or it is
 * rejected: one that could not become a JavaScript Date would break reads.
 */

import { checkTimeMs, checkTimeNs } from "../limits.ts";
import type { OtlpRecord } from "../../model/telemetry.ts";

/** When an event happened, as the mappers need it. */
export interface EventTime {
  /** Milliseconds since the epoch, whole. */
  ms: number;
  /**
   * Nanoseconds since the epoch as decimal text, for identities: the record's
   * own `timeUnixNano` (else `observedTimeUnixNano`) at full precision, which
   * an exporter retry repeats exactly; `event.timestamp` in ns only when the
   * record carries no time of its own.
   */
  ns: string;
}

/**
 * The record's time, or undefined when it has none that parses.
 *
 * @throws {OutOfRangeError} when one of its times is out of range
 */
export function eventTime(record: OtlpRecord): EventTime | undefined {
  const spans = record.signal === "traces";
  checkTimeNs(record.timeUnixNano, spans ? "startTimeUnixNano" : "timeUnixNano");
  checkTimeNs(record.observedTimeUnixNano, spans ? "endTimeUnixNano" : "observedTimeUnixNano");
  const own = record.timeUnixNano ?? record.observedTimeUnixNano;
  const stamp = record.attributes["event.timestamp"];
  if (typeof stamp === "string" && stamp.length >= 10) {
    const ms = Date.parse(stamp);
    if (Number.isFinite(ms)) {
      checkTimeMs(ms, "event.timestamp");
      const whole = Math.floor(ms);
      return { ms: whole, ns: own !== null ? own.toString() : `${whole}000000` };
    }
  }
  if (own === null) return undefined;
  return { ms: Number(own / 1_000_000n), ns: own.toString() };
}

/** Whole milliseconds between two span times, or null when either is missing or end < start. */
export function spanDurationMs(start: bigint | null, end: bigint | null): number | null {
  if (start === null || end === null || end < start) return null;
  return Math.round(Number(end - start) / 1e6);
}
