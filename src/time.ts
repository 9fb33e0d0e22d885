const DAY_MS = 86_400_000;
let cachedDay = NaN;
let cachedDayPrefix = "";

/**
 * Timestamps as the API writes them: RFC 3339 UTC with milliseconds, as
 * `Date.prototype.toISOString` writes them. A page's times mostly share a
 * day, so the date part is kept from the last call and the time of day is
 * written from integers: a quarter of the cost of `toISOString`, which took
 * 4% of the main thread's time serving `/v1/tool-calls` (BENCHMARKS.md, #30).
 */
export function formatTimestamp(ms: number): string {
  // Stored times are whole milliseconds from 1970 to 9999 (src/ingest/limits.ts); anything else
  // takes the general path.
  if (!Number.isInteger(ms) || ms < 0 || ms > 253_402_300_799_999) {
    return new Date(ms).toISOString();
  }
  const day = ms - (ms % DAY_MS);
  if (day !== cachedDay) {
    cachedDayPrefix = new Date(day).toISOString().slice(0, 11);
    cachedDay = day;
  }
  const inDay = ms - day;
  const hours = Math.floor(inDay / 3_600_000);
  const minutes = Math.floor(inDay / 60_000) % 60;
  const seconds = Math.floor(inDay / 1000) % 60;
  const millis = inDay % 1000;
  return `${cachedDayPrefix}${hours < 10 ? "0" : ""}${hours}:${minutes < 10 ? "0" : ""}${minutes}:${
    seconds < 10 ? "0" : ""
  }${seconds}.${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
}

/**
 * The server's wall clock in epoch ms: what "now" means for an insight's
 * window and a retention pass's cutoff. Only tests replace it (through
 * `ServeOverrides.clock`), so that data stamped at fixed dates meets the
 * windows it was built for on any day the suite runs.
 */
export type Clock = () => number;

/** The system's clock. */
export const systemClock: Clock = () => Date.now();

/** A clock that reads `startMs` now and runs forward in real time from there (tests). */
export function clockFrom(startMs: number): Clock {
  const offset = startMs - Date.now();
  return () => Date.now() + offset;
}
