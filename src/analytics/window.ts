/**
 * The insight window (spec §4.8, DESIGN §6): `window` and `granularity`
 * parameters, case-insensitive, with the spec's messages; the window ends at
 * the request time (exclusive) and starts N days earlier (inclusive).
 *
 * @module
 */
import { z } from "zod";
import { firstValues, parseParams } from "../api/params.ts";
import { formatTimestamp } from "../time.ts";

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
/** 1970-01-01 was a Thursday: four days after the Sunday that starts its week. */
const SUNDAY_OFFSET_MS = 4 * DAY_MS;

const WINDOW_DAYS = { "7d": 7, "30d": 30, "90d": 90 } as const;

/** An allowed `window` value, canonical (lower case). */
export type WindowName = keyof typeof WINDOW_DAYS;
/** An allowed `granularity` value, canonical (lower case). */
export type Granularity = "daily" | "weekly";

/** A resolved insight window: epoch milliseconds, start inclusive, end exclusive. */
export interface InsightWindow {
  window: WindowName;
  granularity: Granularity;
  start: number;
  end: number;
}

const windowParam = z.string().optional().transform((raw, ctx): WindowName => {
  if (raw === undefined) return "7d";
  const value = raw.toLowerCase();
  if (!Object.hasOwn(WINDOW_DAYS, value)) {
    ctx.addIssue({
      code: "custom",
      message: `invalid window: ${JSON.stringify(raw)} (allowed: 7d, 30d, 90d)`,
    });
    return z.NEVER;
  }
  return value as WindowName;
});

const granularityParam = z.string().optional().transform((raw, ctx): Granularity => {
  if (raw === undefined) return "daily";
  const value = raw.toLowerCase();
  if (value !== "daily" && value !== "weekly") {
    ctx.addIssue({
      code: "custom",
      message: `invalid granularity: ${JSON.stringify(raw)} (allowed: daily, weekly)`,
    });
    return z.NEVER;
  }
  return value;
});

const insightQuery = z.object({ window: windowParam, granularity: granularityParam })
  .superRefine((query, ctx) => {
    if (query.window === "7d" && query.granularity === "weekly") {
      ctx.addIssue({
        code: "custom",
        message:
          "granularity not allowed for this window: weekly is only valid for 30d/90d windows",
      });
    }
  });

/** Reads `window` and `granularity` from a query string; a bad value is a 400. */
export function parseInsightParams(
  search: URLSearchParams,
): { window: WindowName; granularity: Granularity } {
  return parseParams(insightQuery, firstValues(search));
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

/** The envelope's `window` object. */
export function windowObject(window: InsightWindow) {
  return {
    window: window.window,
    granularity: window.granularity,
    start: formatTimestamp(window.start),
    end: formatTimestamp(window.end),
  };
}
