/**
 * `/v1/sessions`, `/v1/sessions/facets` and `/v1/sessions/{id}` (docs/api.md §4.2–4.4).
 *
 * @module
 */
import { z } from "zod";
import { ApiError, jsonResponse } from "../http/responses.ts";
import { type ApiHandler, type ApiRoute, itemRoute } from "./context.ts";
import { type KeysetList, listPage, listQuery } from "./pagination.ts";
import { exactParam, listFilterParams, listFiltersOf, parseQuery, timeParam } from "./params.ts";
import type { SessionFilters } from "../store/telemetry_queries.ts";
import { actorIdsOf } from "./actor_names.ts";
import { type SessionCostMap, sessionCostsOf } from "./session_costs.ts";
import { rowDimensions } from "./dimensions.ts";
import { facetsRoute } from "./facets.ts";
import type { DimensionMap } from "./shapes.ts";
import { SessionDetail, SessionFacets, SessionPage } from "./schemas.ts";
import {
  domainObject,
  riskFlagObject,
  sessionModelCallObject,
  sessionObject,
  sessionToolCallObject,
} from "./shapes.ts";

type Row = Record<string, unknown>;

const sessionsQuery = listQuery({
  after: timeParam("after"),
  before: timeParam("before"),
  agent: exactParam.meta({
    description: "Only tool calls whose `agent_system` equals this exactly (empty: no filter).",
  }),
  ...listFilterParams({
    domain: exactParam.meta({
      description:
        "Only sessions that reached this external domain, exact match (empty: no filter); their figures still come from the matching calls.",
    }),
  }),
  tag: z.string().optional().meta({
    description: "Unsupported: present with any value, empty included, it is 501.",
  }),
});

const listSessions: ApiHandler = async (context) => {
  const { url } = context;
  if (url.searchParams.has("tag")) {
    throw new ApiError("not_implemented", "the tag filter is not implemented");
  }
  const query = parseQuery(sessionsQuery, url);
  return await listPage(context, SESSION_LIST, query, sessionFiltersOf(query, url));
};

/** What a page of sessions shows beside its rows: their costs' estimates and their dimensions. */
export interface SessionExtras {
  costs: SessionCostMap;
  dims: DimensionMap;
}

/** `/v1/sessions`' pages: by `last_seen`, newest first, each session with its extras (from its row). */
export const SESSION_LIST: KeysetList<SessionFilters, SessionExtras> = {
  endpoint: "sessions",
  page: (queries) => queries.sessionsPage,
  keyOf: (row) => [Number(row.last_seen), String(row.session_id)],
  extra: (rows) => ({ costs: sessionCostsOf(rows), dims: rowDimensions(rows) }),
  toObject: (row, names, { costs, dims }) => sessionObject(row, names, costs, dims),
};

/** The session filters of a parsed query (`/v1/sessions`' and its export's). */
export function sessionFiltersOf(
  query: Omit<SessionFilters, "team" | "dims"> & { repository?: string },
  url: URL,
): SessionFilters {
  return {
    after: query.after,
    before: query.before,
    agent: query.agent,
    domain: query.domain,
    ...listFiltersOf(query, url),
  };
}

const getSession: ApiHandler = async ({ params, orgId, services }) => {
  const [session, calls, flags, domains, children, modelCalls] = await services.reader.read(
    services.reader.queries.sessionDetail(orgId, params.id!),
  ) as Row[][];
  const row = session?.[0];
  if (!row) throw new ApiError("not_found", "session not found");
  const names = await services.actorNames.resolve(orgId, actorIdsOf([row, ...children!]));
  const costs = sessionCostsOf([row, ...children!]);
  const dims = rowDimensions([row, ...children!]);
  return jsonResponse({
    session: sessionObject(row, names, costs, dims),
    tool_calls: calls!.map(sessionToolCallObject),
    risk_flags: flags!.map(riskFlagObject),
    external_domains: domains!.map(domainObject),
    // An extension: the sessions it spawned (Codex subagents), oldest first, at most 1,000.
    child_sessions: children!.map((child) => sessionObject(child, names, costs, dims)),
    // An extension: its model calls, oldest first, at most 5,000.
    model_calls: modelCalls!.map(sessionModelCallObject),
  });
};

/** Routes of this module. */
export const sessionRoutes: ApiRoute[] = [
  {
    pattern: "/v1/sessions",
    handler: listSessions,
    tag: "sessions",
    summary: "A page of sessions, most recent `last_seen` first",
    description:
      "The time, agent, actor and team filters select tool calls: each session is built from its matching calls only (its counts, times and duration), while `cost_usd` covers the whole session. A session exists once it has a tool call.",
    query: sessionsQuery,
    response: SessionPage,
    errors: ["invalid_request", "not_implemented", "overloaded"],
  },
  facetsRoute(
    "sessions",
    { domains: "domains", agents: "agents", repositories: "repositories" },
    "Values for the session filters `domain` and `agent`",
    SessionFacets,
  ),
  itemRoute(
    "sessions",
    getSession,
    "One session with its tool calls, risk flags, external domains and model calls",
    "The session id.",
    SessionDetail,
  ),
];
