/**
 * `/v1/insights/*` (spec §2.11, §4.8–4.14): the `window` and `granularity`
 * parameters, case-insensitive, with the spec's messages, and the routes
 * that run an insight on the analytics replica (`src/analytics/`): the
 * spec's six, and `productivity` (issue #18), which also takes the `actor`
 * and `team` filters of spec §4.2.1 and names each breakdown row's actor.
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
import { type Clock, systemClock } from "../time.ts";
import { jsonResponse } from "../http/responses.ts";
import type { Route } from "../http/router.ts";
import type { ApiHandler } from "./context.ts";
import { exactParam, firstValues, parseParams, teamParam } from "./params.ts";

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

const filterQuery = z.object({ actor: exactParam });

/** The spec's six insight routes and productivity; the window ends at the request time (`clock`). */
export function insightRoutes(
  analytics: Pick<Analytics, "cachedInsight">,
  clock: Clock = systemClock,
): Route<ApiHandler>[] {
  const spec: Route<ApiHandler>[] = INSIGHT_NAMES.map((name) => ({
    pattern: `/v1/insights/${name}`,
    handler: async ({ url, orgId }) => {
      const { window, granularity } = parseInsightParams(url.searchParams);
      const body = await analytics.cachedInsight(
        name,
        orgId,
        insightWindow(window, granularity, clock()),
      );
      return jsonResponse(body);
    },
  }));
  return [...spec, productivityRoute(analytics, clock)];
}

/** `/v1/insights/productivity`: the insight narrowed by `actor`/`team`, actors named. */
function productivityRoute(
  analytics: Pick<Analytics, "cachedInsight">,
  clock: Clock,
): Route<ApiHandler> {
  return {
    pattern: "/v1/insights/productivity",
    handler: async ({ url, orgId, services }) => {
      const { window, granularity } = parseInsightParams(url.searchParams);
      const { actor } = parseParams(filterQuery, firstValues(url.searchParams));
      const body = await analytics.cachedInsight(
        "productivity",
        orgId,
        insightWindow(window, granularity, clock()),
        { actor, team: teamParam(url.searchParams) },
      );
      const rows = body.breakdown ?? [];
      const names = await services.actorNames.resolve(orgId, rows.map((row) => `${row.actor_id}`));
      // A new body: the cached one is shared by later requests.
      return jsonResponse({
        ...body,
        breakdown: rows.map(({ actor_id, ...rest }) => ({
          actor_id,
          actor_name: names.get(`${actor_id}`) ?? "",
          ...rest,
        })),
      });
    },
  };
}
