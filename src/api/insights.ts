/**
 * `/v1/insights/*` (docs/api.md §2.11, §4.8–4.16): the `window` and `granularity`
 * parameters, case-insensitive, with the spec's messages, and the routes
 * that run an insight on the analytics replica (`src/analytics/`): the
 * spec's six, and `productivity` (issue #18), which also takes the `actor`
 * and `team` filters of docs/api.md §4.2.1 and names each breakdown row's actor.
 * Every one takes the dimension filters of docs/api.md §4.22 (`dim.<key>`,
 * `repository`): the store says which sessions match, the replica counts only theirs;
 * and `group_by` (docs/api.md §4.23): one summary per actor, agent or dimension value.
 *
 * @module
 */
import { z } from "zod";
import {
  type Analytics,
  type AnyInsightName,
  GRANULARITIES,
  type Granularity,
  type GroupBy,
  type InsightBody,
  type InsightFilters,
  type InsightGrouping,
  INSIGHTS,
  insightWindow,
  isWindowName,
  WINDOW_NAMES,
  type WindowName,
} from "../analytics/mod.ts";
import { DEFAULT_DIMENSION_KEYS } from "../config.ts";
import { type Clock, systemClock } from "../time.ts";
import { invalidRequest, jsonResponse } from "../http/responses.ts";
import type { TelemetryReader } from "../store/stores.ts";
import type { ApiRoute, ApiServices } from "./context.ts";
import {
  actorFilterParams,
  actorFiltersOf,
  DIM_PREFIX,
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

/** `group_by` as a query schema documents it; read by {@link groupByOf} against the configured keys. */
const groupByQuery = z.object({
  "group_by": z.string().optional().meta({
    description:
      "**Extension.** `actor`, `agent` or `dim.<key>` (a key named by `--dimension`): adds `groups`, one summary per actor id, agent system or dimension value (null: the rows with none), at most 100, biggest first, and `group_by`, `groups_truncated`. Filters apply first. Any other value is 400; empty is none.",
  }),
});

/** The `group_by` of a request (docs/api.md §4.23), or undefined; anything else is 400. */
function groupByOf(url: URL, dimensionKeys: readonly string[]): GroupBy | undefined {
  const raw = parseQuery(groupByQuery, url).group_by;
  if (raw === undefined || raw === "") return undefined;
  const allowed: string[] = ["actor", "agent", ...dimensionKeys.map((key) => DIM_PREFIX + key)];
  if (!allowed.includes(raw)) {
    throw invalidRequest(
      `invalid group_by: ${JSON.stringify(raw)} (allowed: ${allowed.join(", ")})`,
    );
  }
  return raw as GroupBy;
}

/**
 * The grouping of a request: for `dim.<key>`, every session of the
 * organization with the key and its value, read from the store now (the
 * replica holds no dimensions).
 */
async function groupingOf(
  by: GroupBy,
  reader: TelemetryReader,
  orgId: string,
): Promise<InsightGrouping> {
  if (!by.startsWith(DIM_PREFIX)) return { by };
  const key = by.slice(DIM_PREFIX.length);
  const [rows] = await reader.read([reader.queries.sessionDimensionValues(orgId, key)]);
  const sessions: string[] = [];
  const values: string[] = [];
  for (const row of rows as Record<string, unknown>[]) {
    sessions.push(String(row.session_id));
    values.push(String(row.value));
  }
  return { by, sessions, values };
}

/** The groups of an actor grouping with each actor's name as `label` where it has one. */
async function labelled(
  body: InsightBody,
  orgId: string,
  services: Pick<ApiServices, "actorNames">,
): Promise<InsightBody["groups"]> {
  const groups = body.groups ?? [];
  if (body.group_by !== "actor") return groups;
  const ids = groups.flatMap((group) => group.value === null ? [] : [group.value]);
  const names = await services.actorNames.resolve(orgId, ids);
  return groups.map((group) => {
    const name = group.value === null ? "" : names.get(group.value) ?? "";
    return name === "" ? group : { value: group.value, label: name, summary: group.summary };
  });
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
 * actor. `group_by` may name `dimensionKeys` (`--dimension`).
 */
export function insightRoutes(
  analytics: Pick<Analytics, "cachedInsight">,
  clock: Clock = systemClock,
  dimensionKeys: readonly string[] = DEFAULT_DIMENSION_KEYS,
): ApiRoute[] {
  return Object.values(INSIGHTS).map(({ name, actorFilters }) => ({
    pattern: `/v1/insights/${name}`,
    tag: "insights",
    summary: INSIGHT_SUMMARIES[name],
    description:
      "Answered by the analytics replica, which catches up with everything acknowledged before the request (under continuous ingest, within 5 s). A window without data has zero summaries and `series`/`breakdown` `[]` where the insight has them.",
    query: actorFilters
      ? z.object({
        ...insightParams.shape,
        ...filterQuery.shape,
        ...dimQuery.shape,
        ...groupByQuery.shape,
      })
      : z.object({ ...insightParams.shape, ...dimQuery.shape, ...groupByQuery.shape }),
    response: INSIGHT_BODIES[name],
    errors: ["invalid_request", "overloaded", "insights_unavailable"],
    handler: async ({ url, orgId, services }) => {
      const { window, granularity } = parseInsightParams(url.searchParams);
      const groupBy = groupByOf(url, dimensionKeys);
      const filters: InsightFilters = {
        ...(actorFilters ? actorFiltersOf(parseQuery(filterQuery, url), url) : {}),
        ...await dimensionFilters(url, services.reader, orgId),
      };
      const grouping = groupBy === undefined
        ? undefined
        : await groupingOf(groupBy, services.reader, orgId);
      let body = await analytics.cachedInsight(
        name,
        orgId,
        insightWindow(window, granularity, clock()),
        filters,
        grouping,
      );
      // A new body where names are added: the cached one is shared by later requests.
      if (body.group_by === "actor") {
        body = { ...body, groups: await labelled(body, orgId, services) };
      }
      if (!actorFilters) return jsonResponse(body);
      const rows = body.breakdown ?? [];
      const names = await services.actorNames.resolve(orgId, rows.map((row) => `${row.actor_id}`));
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
