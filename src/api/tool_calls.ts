/**
 * `/v1/tool-calls`, `/v1/tool-calls/facets` and `/v1/tool-calls/{id}` (docs/api.md §4.5–4.7).
 *
 * @module
 */
import { z } from "zod";
import { ApiError, invalidRequest, jsonResponse } from "../http/responses.ts";
import { type ApiHandler, type ApiRoute, itemRoute } from "./context.ts";
import { actorIdsOf } from "./actor_names.ts";
import { type KeysetList, listPage, listQuery } from "./pagination.ts";
import { exactParam, listFilterParams, listFiltersOf, parseQuery, timeParam } from "./params.ts";
import { rowDimensions } from "./dimensions.ts";
import { facetsRoute } from "./facets.ts";
import type { DimensionMap } from "./shapes.ts";
import { OUTCOMES, ToolCallDetail, ToolCallFacets, ToolCallPage } from "./schemas.ts";
import { toolCallDetailObject, toolCallObject } from "./shapes.ts";
import type { CallFilters } from "../store/telemetry_queries.ts";

type Row = Record<string, unknown>;

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
}).meta({
  description: "Only calls with this outcome; case-insensitive.",
  enum: [...OUTCOMES],
});

/** The filters of `/v1/tool-calls` (docs/api.md §4.5), which its export takes too. */
const toolCallFilterParams = {
  after: timeParam("after"),
  before: timeParam("before"),
  "session_id": exactParam.meta({ description: "Only calls in this session." }),
  ...listFilterParams({
    "tool_name": exactParam.meta({ description: "Exact tool name." }),
    "tool_type": exactParam.meta({ description: "Exact tool type (`builtin`, `mcp`)." }),
    category: exactParam.meta({
      description:
        "Exact category: `code_exec`, `file_read`, `file_write`, `web_fetch`, `mcp`, `other`.",
    }),
    outcome: outcomeParam,
  }),
  success: z.string().optional().meta({
    description:
      "Not accepted: any value is 400 `invalid_request`; the success filter is replaced by `outcome`.",
    deprecated: true,
  }),
};

/** The query of `/v1/tool-calls`' filters; an endpoint that takes them extends it. */
export const toolCallFilterQuery = z.object(toolCallFilterParams);

const toolCallsQuery = listQuery(toolCallFilterParams);

/**
 * Parses a request's query with `schema` (the list's, or one that extends
 * its filters): 400 `invalid_request` on a bad value and on `success`.
 */
export function parseToolCallQuery<S extends z.ZodType<z.output<typeof toolCallFilterQuery>>>(
  url: URL,
  schema: S,
): { query: z.output<S>; filters: CallFilters } {
  if (url.searchParams.has("success")) {
    throw invalidRequest(
      "invalid parameter: success (the success filter is replaced by outcome: ok, error or rejected)",
    );
  }
  const query = parseQuery(schema, url);
  const filters: CallFilters = {
    after: query.after,
    before: query.before,
    sessionId: query.session_id,
    toolName: query.tool_name,
    toolType: query.tool_type,
    category: query.category,
    outcome: query.outcome,
    ...listFiltersOf(query, url),
  };
  return { query, filters };
}

const listToolCalls: ApiHandler = async (context) => {
  const { query, filters } = parseToolCallQuery(context.url, toolCallsQuery);
  return await listPage(context, TOOL_CALL_LIST, query, filters);
};

/** `/v1/tool-calls`' pages: by `(ts, id)`, newest first, each call with its session's dimensions. */
export const TOOL_CALL_LIST: KeysetList<CallFilters, DimensionMap> = {
  endpoint: "tool-calls",
  page: (queries) => queries.toolCallsPage,
  keyOf: (row) => [Number(row.ts), String(row.id)],
  extra: rowDimensions,
  toObject: toolCallObject,
};

const getToolCall: ApiHandler = async ({ params, orgId, services }) => {
  const [rows] = await services.reader.read([
    services.reader.queries.toolCallDetail(orgId, params.id!),
  ]) as Row[][];
  const row = rows?.[0];
  if (!row) throw new ApiError("not_found", "tool call not found");
  const names = await services.actorNames.resolve(orgId, actorIdsOf([row]));
  return jsonResponse(toolCallDetailObject(row, names, rowDimensions([row])));
};

/** Routes of this module. */
export const toolCallRoutes: ApiRoute[] = [
  {
    pattern: "/v1/tool-calls",
    handler: listToolCalls,
    tag: "tool-calls",
    summary: "A page of tool calls, newest first",
    query: toolCallsQuery,
    response: ToolCallPage,
    errors: ["invalid_request", "overloaded"],
  },
  facetsRoute(
    "tool-calls",
    { tool_names: "tool_names", tool_types: "tool_types", categories: "categories" },
    "Values for the tool-call filters `tool_name`, `tool_type` and `category`",
    ToolCallFacets,
  ),
  itemRoute(
    "tool-calls",
    getToolCall,
    "One tool call in detail",
    "The tool call's `id`.",
    ToolCallDetail,
  ),
];
