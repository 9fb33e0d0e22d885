/**
 * `/v1/insights/*` (docs/api.md §2.11, §4.8–4.16): the `window` and `granularity`
 * parameters, case-insensitive, with the spec's messages, and the routes
 * that run an insight on the analytics replica (`src/analytics/`): the
 * spec's six, and `productivity` (issue #18), which also takes the `actor`
 * and `team` filters of docs/api.md §4.2.1 and names each breakdown row's actor.
 * Every one takes the dimension filters of docs/api.md §4.22 (`dim.<key>`,
 * `repository`): the store says which sessions match, the replica counts only theirs.
 *
 * @module
 */
import { z } from "zod";
import {
  type Analytics,
  type AnyInsightName,
  GRANULARITIES,
  type Granularity,
  type InsightFilters,
  INSIGHTS,
  insightWindow,
  isWindowName,
  WINDOW_NAMES,
  type WindowName,
} from "../analytics/mod.ts";
import { type Clock, systemClock } from "../time.ts";
import { jsonResponse } from "../http/responses.ts";
import type { TelemetryReader } from "../store/stores.ts";
import type { ApiRoute } from "./context.ts";
import {
  actorFilterParams,
  actorFiltersOf,
  dimFilters,
  dimQueryParam,
  firstValues,
  parseParams,
  parseQuery,
  repositoryParam,
} from "./params.ts";
import { dimensionSessions } from "./dimensions.ts";
import { INSIGHT_BODIES } from "./schemas.ts";

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
}).meta({
  description: "How far back from now the window starts; case-insensitive.",
  enum: [...WINDOW_NAMES],
});

const granularityParam = z.string().optional().transform((raw, ctx): Granularity => {
  if (raw === undefined) return "daily";
  const value = raw.toLowerCase();
  if (!(GRANULARITIES as readonly string[]).includes(value)) {
    ctx.addIssue({
      code: "custom",
      message: `invalid granularity: ${JSON.stringify(raw)} (allowed: daily, weekly)`,
    });
    return z.NEVER;
  }
  return value as Granularity;
}).meta({
  description:
    "Buckets of `series`: UTC days, or weeks starting Sunday 00:00 UTC; case-insensitive. `weekly` only with `30d` or `90d`.",
  enum: [...GRANULARITIES],
});

const insightParams = z.object({ window: windowParam, granularity: granularityParam });

const insightQuery = insightParams
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

const filterQuery = z.object(actorFilterParams);

/** The dimension filters every insight takes (docs/api.md §4.22). */
const dimQuery = z.object({ repository: repositoryParam, "dim.<key>": dimQueryParam });

/**
 * The dimension filters of a request and the sessions they select in the
 * store, read when the request arrives; `{}` without any.
 */
async function dimensionFilters(
  url: URL,
  reader: TelemetryReader,
  orgId: string,
): Promise<InsightFilters> {
  const { dims } = dimFilters(url.searchParams, parseQuery(dimQuery, url).repository);
  if (dims === undefined) return {};
  return { dims, sessions: await dimensionSessions(reader, orgId, dims) };
}

/** What each insight's route returns, in one line. */
const INSIGHT_SUMMARIES: Record<AnyInsightName, string> = {
  "activity": "Tool calls, errors and sessions per day or week",
  "top-tools": "The 50 most-used tools with errors and mean duration",
  "outliers": "Sessions above the 95th percentile of calls per session",
  "cost": "Model tokens and cost by provider and model",
  "risk": "Risk flags (credentials, destructive commands, sensitive paths) by kind",
  "domains": "External domains reached by curl/wget, web fetches and MCP tools",
  "productivity": "What the agents got done, per actor and agent (an extension)",
};

/**
 * A route per insight of the registry (`INSIGHTS`): the spec's six and the
 * extensions. The window ends at the request time (`clock`); an insight that
 * takes `actor` and `team` is narrowed by them and names each breakdown row's
 * actor.
 */
export function insightRoutes(
  analytics: Pick<Analytics, "cachedInsight">,
  clock: Clock = systemClock,
): ApiRoute[] {
  return Object.values(INSIGHTS).map(({ name, actorFilters }) => ({
    pattern: `/v1/insights/${name}`,
    tag: "insights",
    summary: INSIGHT_SUMMARIES[name],
    description:
      "Answered by the analytics replica, which catches up with everything acknowledged before the request (under continuous ingest, within 5 s). A window without data has zero summaries and `series`/`breakdown` `[]` where the insight has them.",
    query: actorFilters
      ? z.object({ ...insightParams.shape, ...filterQuery.shape, ...dimQuery.shape })
      : z.object({ ...insightParams.shape, ...dimQuery.shape }),
    response: INSIGHT_BODIES[name],
    errors: ["invalid_request", "overloaded", "insights_unavailable"],
    handler: async ({ url, orgId, services }) => {
      const { window, granularity } = parseInsightParams(url.searchParams);
      const filters: InsightFilters = {
        ...(actorFilters ? actorFiltersOf(parseQuery(filterQuery, url), url) : {}),
        ...await dimensionFilters(url, services.reader, orgId),
      };
      const body = await analytics.cachedInsight(
        name,
        orgId,
        insightWindow(window, granularity, clock()),
        filters,
      );
      if (!actorFilters) return jsonResponse(body);
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
  }));
}
