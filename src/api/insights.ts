/**
 * `/v1/insights/*` (spec §2.11, §4.8–4.14): the `window` and `granularity`
 * parameters, case-insensitive, with the spec's messages, and the six routes
 * that run an insight on the analytics replica (`src/analytics/`).
 *
 * @module
 */
import { z } from "zod";
import {
  type Analytics,
  type Granularity,
  INSIGHT_NAMES,
  insightWindow,
  isWindowName,
  type WindowName,
} from "../analytics/mod.ts";
import { jsonResponse } from "../http/responses.ts";
import type { Route } from "../http/router.ts";
import type { ApiHandler } from "./context.ts";
import { firstValues, parseParams } from "./params.ts";

const windowParam = z.string().optional().transform((raw, ctx): WindowName => {
  if (raw === undefined) return "7d";
  const value = raw.toLowerCase();
  if (!isWindowName(value)) {
    ctx.addIssue({
      code: "custom",
      message: `invalid window: ${JSON.stringify(raw)} (allowed: 7d, 30d, 90d)`,
    });
    return z.NEVER;
  }
  return value;
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

/** The six insight routes over the analytics service; the window ends at the request time. */
export function insightRoutes(analytics: Pick<Analytics, "cachedInsight">): Route<ApiHandler>[] {
  return INSIGHT_NAMES.map((name) => ({
    pattern: `/v1/insights/${name}`,
    handler: async ({ url, orgId }) => {
      const { window, granularity } = parseInsightParams(url.searchParams);
      const body = await analytics.cachedInsight(
        name,
        orgId,
        insightWindow(window, granularity, Date.now()),
      );
      return jsonResponse(body);
    },
  }));
}
