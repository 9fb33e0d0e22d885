/**
 * `GET /v1/unmapped-events` (docs/api.md §4.17, an extension): what the
 * organization's agents sent that stored nothing, by agent, version, event
 * name and reason, so a client release that renames or adds an event shows
 * the day it ships, to the organization as well as in `/metrics`.
 *
 * @module
 */
import { z } from "zod";
import { jsonResponse } from "../http/responses.ts";
import type { Route } from "../http/router.ts";
import { formatTimestamp } from "../time.ts";
import type { ApiHandler } from "./context.ts";
import { exactParam, firstValues, parseParams } from "./params.ts";

const query = z.object({ actor: exactParam });

const listUnmappedEvents: ApiHandler = async ({ url, orgId, services }) => {
  const { actor } = parseParams(query, firstValues(url.searchParams));
  const [rows] = await services.reader.read([
    services.reader.queries.unmappedEvents(orgId, actor ?? ""),
  ]) as Record<string, unknown>[][];
  return jsonResponse({
    data: rows!.map((row) => ({
      agent: String(row.agent),
      agent_version: String(row.agent_version),
      event_name: String(row.event_name),
      reason: String(row.reason),
      records: Number(row.records),
      first_seen: formatTimestamp(Number(row.first_seen)),
      last_seen: formatTimestamp(Number(row.last_seen)),
    })),
  });
};

/** Routes of this module. */
export const unmappedEventRoutes: Route<ApiHandler>[] = [
  { pattern: "/v1/unmapped-events", handler: listUnmappedEvents },
];
