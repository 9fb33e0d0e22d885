/**
 * The insight window (docs/api.md §4.8, docs/design.md §6.1): it ends at the request time
 * (exclusive) and starts N days earlier (inclusive), in daily or weekly
 * buckets. The query parameters that choose it are read by `src/api/insights.ts`.
 *
 * @module
 */
import { formatTimestamp } from "../time.ts";

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
/** 1970-01-01 was a Thursday: four days after the Sunday that starts its week. */
const SUNDAY_OFFSET_MS = 4 * DAY_MS;

const WINDOW_DAYS = { "7d": 7, "30d": 30, "90d": 90 } as const;

/** An allowed `window` value, canonical (lower case). */
export type WindowName = keyof typeof WINDOW_DAYS;

/** Every allowed `window`, shortest first. */
export const WINDOW_NAMES = Object.keys(WINDOW_DAYS) as readonly WindowName[];

/** Every allowed `granularity`, canonical (lower case). */
export const GRANULARITIES = ["daily", "weekly"] as const;

/** An allowed `granularity` value, canonical (lower case). */
export type Granularity = typeof GRANULARITIES[number];

/** A resolved insight window: epoch milliseconds, start inclusive, end exclusive. */
export interface InsightWindow {
  window: WindowName;
  granularity: Granularity;
  start: number;
  end: number;
}

/** Whether `value` is an allowed `window`, canonical (lower case). */
export function isWindowName(value: string): value is WindowName {
  return Object.hasOwn(WINDOW_DAYS, value);
}

/** The window of a request made at `now` (epoch ms). */
export function insightWindow(
  window: WindowName,
  granularity: Granularity,
  now: number,
): InsightWindow {
  return { window, granularity, start: now - WINDOW_DAYS[window] * DAY_MS, end: now };
}

/**
 * Bucket arithmetic shared by SQL and tests: a time's bucket starts at
 * `ts - ((ts + offset) mod width)`, UTC midnight (daily) or Sunday 00:00 UTC
 * (weekly).
 */
export function bucketParams(granularity: Granularity): { width: number; offset: number } {
  return granularity === "daily"
    ? { width: DAY_MS, offset: 0 }
    : { width: WEEK_MS, offset: SUNDAY_OFFSET_MS };
}

/** The start of the bucket holding `ts`. */
export function bucketStart(ts: number, granularity: Granularity): number {
  const { width, offset } = bucketParams(granularity);
  return ts - ((((ts + offset) % width) + width) % width);
}

/**
 * The whole UTC days of `window` that may be read from per-day rollups
 * reaching up to `through` (a midnight, epoch ms): `[dayLo, dayHi)`, empty
 * (`dayLo === dayHi`) when there is none. The rest of the window,
 * `[start, dayLo)` and `[dayHi, end)`, is read from raw rows.
 */
export function wholeDays(
  window: InsightWindow,
  through: number,
): { dayLo: number; dayHi: number } {
  const first = bucketStart(window.start, "daily");
  const dayLo = Math.min(first === window.start ? first : first + DAY_MS, window.end);
  const dayHi = Math.max(dayLo, Math.min(bucketStart(window.end, "daily"), through));
  return { dayLo, dayHi };
}

/** The envelope's `window` object. */
export function windowObject(window: InsightWindow) {
  return {
    window: window.window,
    granularity: window.granularity,
    start: formatTimestamp(window.start),
    end: formatTimestamp(window.end),
  };
}
