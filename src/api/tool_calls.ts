/**
 * `/v1/tool-calls`, `/v1/tool-calls/facets` and `/v1/tool-calls/{id}` (docs/api.md §4.5–4.7).
 *
 * @module
 */
import { z } from "zod";
import { ApiError, invalidRequest, jsonResponse } from "../http/responses.ts";
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
import { toolCallDetailObject, toolCallObject } from "./shapes.ts";
import { actorIdsOf, values } from "./sessions.ts";

type Row = Record<string, unknown>;

const OUTCOMES = ["ok", "error", "rejected"] as const;

const outcomeParam = z.string().optional().transform((raw, ctx) => {
  if (raw === undefined) return undefined;
  const outcome = raw.toLowerCase();
  if (!(OUTCOMES as readonly string[]).includes(outcome)) {
    ctx.addIssue({
      code: "custom",
      message: `invalid outcome: ${JSON.stringify(raw)} (allowed: ok, error, rejected)`,
    });
    return z.NEVER;
  }
  return outcome;
});

const toolCallsQuery = z.object({
  limit: limitParam,
  after: timeParam("after"),
  before: timeParam("before"),
  session_id: exactParam,
  actor: exactParam,
  tool_name: exactParam,
  tool_type: exactParam,
  category: exactParam,
  outcome: outcomeParam,
  cursor: z.string().optional(),
});

const listToolCalls: ApiHandler = async ({ url, orgId, services }) => {
  if (url.searchParams.has("success")) {
    throw invalidRequest(
      "invalid parameter: success (the success filter is replaced by outcome: ok, error or rejected)",
    );
  }
  const query = parseParams(toolCallsQuery, firstValues(url.searchParams));
  const filters = {
    after: query.after,
    before: query.before,
    sessionId: query.session_id,
    actor: query.actor,
    team: teamParam(url.searchParams),
    toolName: query.tool_name,
    toolType: query.tool_type,
    category: query.category,
    outcome: query.outcome,
  };
  const cursors = cursorBinding(services.cursorSecret, orgId, "tool-calls", filters);
  const after = query.cursor === undefined ? null : cursors.decode(query.cursor);
  const [rows] = await services.reader.read([
    services.reader.queries.toolCallsPage(orgId, filters, after, query.limit),
  ]);
  const names = await services.actorNames.resolve(orgId, actorIdsOf(rows as Row[]));
  return jsonResponse(pageEnvelope(
    rows as Row[],
    query.limit,
    cursors,
    (row) => [Number(row.ts), String(row.id)],
    (row) => toolCallObject(row, names),
  ));
};

const toolCallFacets: ApiHandler = async ({ orgId, services }) => {
  const [names, types, categories] = await services.reader.read([
    services.reader.queries.facet(orgId, "tool_names"),
    services.reader.queries.facet(orgId, "tool_types"),
    services.reader.queries.facet(orgId, "categories"),
  ]);
  return jsonResponse({
    tool_names: values(names!),
    tool_types: values(types!),
    categories: values(categories!),
  });
};

const getToolCall: ApiHandler = async ({ params, orgId, services }) => {
  const [rows] = await services.reader.read([
    services.reader.queries.toolCallDetail(orgId, params.id!),
  ]) as Row[][];
  const row = rows?.[0];
  if (!row) throw new ApiError(404, "not_found", "tool call not found");
  const names = await services.actorNames.resolve(orgId, actorIdsOf([row]));
  return jsonResponse(toolCallDetailObject(row, names));
};

/** Routes of this module. */
export const toolCallRoutes: Route<ApiHandler>[] = [
  { pattern: "/v1/tool-calls", handler: listToolCalls },
  { pattern: "/v1/tool-calls/facets", handler: toolCallFacets },
  { pattern: "/v1/tool-calls/:id", handler: getToolCall },
];
