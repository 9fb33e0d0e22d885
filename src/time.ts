/** Timestamps as the API writes them: RFC 3339 UTC with milliseconds. */
export function formatTimestamp(ms: number): string {
  return new Date(ms).toISOString();
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
