/**
 * The facets endpoints (docs/api.md §4.2, §4.6): each field of the answer is
 * one facet's values, all read at once.
 *
 * @module
 */
import { jsonResponse } from "../http/responses.ts";
import type { FacetName } from "../store/telemetry_queries.ts";
import type { ApiHandler, ApiRoute } from "./context.ts";

/**
 * `/v1/<tag>/facets`: the values of a list's filters, `{field: values}` for
 * each field's facet, answered with `response`.
 */
export function facetsRoute(
  tag: "sessions" | "tool-calls",
  fields: Readonly<Record<string, FacetName>>,
  summary: string,
  response: ApiRoute["response"],
): ApiRoute {
  return {
    pattern: `/v1/${tag}/facets`,
    handler: facetsHandler(fields),
    tag,
    summary,
    response,
    errors: ["overloaded"],
  };
}

/** A handler answering `{field: values}` for each field's facet. */
function facetsHandler(fields: Readonly<Record<string, FacetName>>): ApiHandler {
  const entries = Object.entries(fields);
  return async ({ orgId, services }) => {
    const rows = await services.reader.read(
      entries.map(([, facet]) => services.reader.queries.facet(orgId, facet)),
    );
    return jsonResponse(
      Object.fromEntries(entries.map(([field], i) => [field, values(rows[i]!)])),
    );
  };
}

/** Facet rows to their values. */
function values(rows: unknown[]): string[] {
  return (rows as { value: string }[]).map((row) => row.value);
}
