/**
 * `/v1/sessions`, `/v1/sessions/facets` and `/v1/sessions/{id}` (docs/api.md §4.2–4.4).
 *
 * @module
 */
import { z } from "zod";
import { ApiError, jsonResponse } from "../http/responses.ts";
import type { ApiHandler, ApiRoute } from "./context.ts";
import { cursorBinding } from "./cursor.ts";
import { readDimensions } from "./dimensions.ts";
import { pageEnvelope } from "./pagination.ts";
import {
  actorParam,
  cursorParam,
  dimFilters,
  dimQueryParam,
  exactParam,
  firstValues,
  limitParam,
  parseParams,
  repositoryParam,
  teamParam,
  teamQueryParam,
  timeParam,
} from "./params.ts";
import { SessionDetail, SessionFacets, SessionPage } from "./schemas.ts";
import {
  domainObject,
  riskFlagObject,
  sessionModelCallObject,
  sessionObject,
  sessionToolCallObject,
} from "./shapes.ts";

type Row = Record<string, unknown>;

const sessionsQuery = z.object({
  limit: limitParam,
  cursor: cursorParam,
  after: timeParam("after"),
  before: timeParam("before"),
  agent: exactParam.meta({
    description: "Only tool calls whose `agent_system` equals this exactly (empty: no filter).",
  }),
  actor: actorParam,
  team: teamQueryParam,
  domain: exactParam.meta({
    description:
      "Only sessions that reached this external domain, exact match (empty: no filter); their figures still come from the matching calls.",
  }),
  repository: repositoryParam,
  "dim.<key>": dimQueryParam,
  tag: z.string().optional().meta({
    description: "Unsupported: present with any value, empty included, it is 501.",
  }),
});

const listSessions: ApiHandler = async ({ url, orgId, services }) => {
  if (url.searchParams.has("tag")) {
    throw new ApiError("not_implemented", "the tag filter is not implemented");
  }
  const query = parseParams(sessionsQuery, firstValues(url.searchParams));
  const filters = {
    after: query.after,
    before: query.before,
    agent: query.agent,
    actor: query.actor,
    team: teamParam(url.searchParams),
    domain: query.domain,
    ...dimFilters(url.searchParams, query.repository),
  };
  const cursors = cursorBinding(services.cursorSecret, orgId, "sessions", filters);
  const after = query.cursor === undefined ? null : cursors.decode(query.cursor);
  const [rows] = await services.reader.read([
    services.reader.queries.sessionsPage(orgId, filters, after, query.limit),
  ]);
  const [names, dims] = await Promise.all([
    services.actorNames.resolve(orgId, actorIdsOf(rows as Row[])),
    readDimensions(services.reader, orgId, (rows as Row[]).slice(0, query.limit)),
  ]);
  return jsonResponse(pageEnvelope(
    rows as Row[],
    query.limit,
    cursors,
    (row) => [Number(row.last_seen), String(row.session_id)],
    (row) => sessionObject(row, names, dims),
  ));
};

const sessionFacets: ApiHandler = async ({ orgId, services }) => {
  const [domains, agents, repositories] = await services.reader.read([
    services.reader.queries.facet(orgId, "domains"),
    services.reader.queries.facet(orgId, "agents"),
    services.reader.queries.facet(orgId, "repositories"),
  ]);
  return jsonResponse({
    domains: values(domains!),
    agents: values(agents!),
    repositories: values(repositories!),
  });
};

const getSession: ApiHandler = async ({ params, orgId, services }) => {
  const [session, calls, flags, domains, children, modelCalls] = await services.reader.read(
    services.reader.queries.sessionDetail(orgId, params.id!),
  ) as Row[][];
  const row = session?.[0];
  if (!row) throw new ApiError("not_found", "session not found");
  const [names, dims] = await Promise.all([
    services.actorNames.resolve(orgId, actorIdsOf([row, ...children!])),
    readDimensions(services.reader, orgId, [row, ...children!]),
  ]);
  return jsonResponse({
    session: sessionObject(row, names, dims),
    tool_calls: calls!.map(sessionToolCallObject),
    risk_flags: flags!.map(riskFlagObject),
    external_domains: domains!.map(domainObject),
    // An extension: the sessions it spawned (Codex subagents), oldest first, at most 1,000.
    child_sessions: children!.map((child) => sessionObject(child, names, dims)),
    // An extension: its model calls, oldest first, at most 5,000.
    model_calls: modelCalls!.map(sessionModelCallObject),
  });
};

/** The actor ids of telemetry rows, each once. */
export function actorIdsOf(rows: readonly Row[]): Set<string> {
  return new Set(rows.map((row) => String(row.actor_id ?? "")));
}

/** Facet rows to their values. */
export function values(rows: unknown[]): string[] {
  return (rows as { value: string }[]).map((row) => row.value);
}

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
  {
    pattern: "/v1/sessions/facets",
    handler: sessionFacets,
    tag: "sessions",
    summary: "Values for the session filters `domain` and `agent`",
    response: SessionFacets,
    errors: ["overloaded"],
  },
  {
    pattern: "/v1/sessions/:id",
    handler: getSession,
    tag: "sessions",
    summary: "One session with its tool calls, risk flags, external domains and model calls",
    pathParams: { id: "The session id." },
    response: SessionDetail,
    errors: ["not_found", "overloaded"],
  },
];
