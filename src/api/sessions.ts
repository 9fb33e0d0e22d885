/**
 * `/v1/sessions`, `/v1/sessions/facets` and `/v1/sessions/{id}` (docs/api.md §4.2–4.4).
 *
 * @module
 */
import { z } from "zod";
import { ApiError, jsonResponse } from "../http/responses.ts";
import type { Route } from "../http/router.ts";
import type { ApiHandler } from "./context.ts";
import { cursorBinding } from "./cursor.ts";
import { pageEnvelope } from "./pagination.ts";
import {
  exactParam,
  firstValues,
  limitParam,
  parseParams,
  teamParam,
  timeParam,
} from "./params.ts";
import { domainObject, riskFlagObject, sessionObject, sessionToolCallObject } from "./shapes.ts";

type Row = Record<string, unknown>;

const sessionsQuery = z.object({
  limit: limitParam,
  after: timeParam("after"),
  before: timeParam("before"),
  agent: exactParam,
  actor: exactParam,
  domain: exactParam,
  cursor: z.string().optional(),
});

const listSessions: ApiHandler = async ({ url, orgId, services }) => {
  if (url.searchParams.has("tag")) {
    throw new ApiError(501, "not_implemented", "the tag filter is not implemented");
  }
  const query = parseParams(sessionsQuery, firstValues(url.searchParams));
  const filters = {
    after: query.after,
    before: query.before,
    agent: query.agent,
    actor: query.actor,
    team: teamParam(url.searchParams),
    domain: query.domain,
  };
  const cursors = cursorBinding(services.cursorSecret, orgId, "sessions", filters);
  const after = query.cursor === undefined ? null : cursors.decode(query.cursor);
  const [rows] = await services.reader.read([
    services.reader.queries.sessionsPage(orgId, filters, after, query.limit),
  ]);
  const names = await services.actorNames.resolve(orgId, actorIdsOf(rows as Row[]));
  return jsonResponse(pageEnvelope(
    rows as Row[],
    query.limit,
    cursors,
    (row) => [Number(row.last_seen), String(row.session_id)],
    (row) => sessionObject(row, names),
  ));
};

const sessionFacets: ApiHandler = async ({ orgId, services }) => {
  const [domains, agents] = await services.reader.read([
    services.reader.queries.facet(orgId, "domains"),
    services.reader.queries.facet(orgId, "agents"),
  ]);
  return jsonResponse({ domains: values(domains!), agents: values(agents!) });
};

const getSession: ApiHandler = async ({ params, orgId, services }) => {
  const [session, calls, flags, domains, children] = await services.reader.read(
    services.reader.queries.sessionDetail(orgId, params.id!),
  ) as Row[][];
  const row = session?.[0];
  if (!row) throw new ApiError(404, "not_found", "session not found");
  const names = await services.actorNames.resolve(orgId, actorIdsOf([row, ...children!]));
  return jsonResponse({
    session: sessionObject(row, names),
    tool_calls: calls!.map(sessionToolCallObject),
    risk_flags: flags!.map(riskFlagObject),
    external_domains: domains!.map(domainObject),
    // An extension: the sessions it spawned (Codex subagents), oldest first, at most 1,000.
    child_sessions: children!.map((child) => sessionObject(child, names)),
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
export const sessionRoutes: Route<ApiHandler>[] = [
  { pattern: "/v1/sessions", handler: listSessions },
  { pattern: "/v1/sessions/facets", handler: sessionFacets },
  { pattern: "/v1/sessions/:id", handler: getSession },
];
