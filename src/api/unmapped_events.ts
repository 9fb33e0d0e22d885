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
import { formatTimestamp } from "../time.ts";
import type { ApiHandler, ApiRoute } from "./context.ts";
import { actorParam, parseQuery } from "./params.ts";
import { UnmappedEvents } from "./schemas.ts";

const query = z.object({ actor: actorParam });

const listUnmappedEvents: ApiHandler = async ({ url, orgId, services }) => {
  const { actor } = parseQuery(query, url);
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
export const unmappedEventRoutes: ApiRoute[] = [
  {
    pattern: "/v1/unmapped-events",
    handler: listUnmappedEvents,
    tag: "unmapped-events",
    summary: "What the organization's agents sent that stored nothing (an extension)",
    description:
      "By agent, version, event name and reason, so a client release that renames or adds an event shows the day it ships. An organization keeps at most 1,000 such rows; a row not seen for the retention period goes with the telemetry.",
    query,
    response: UnmappedEvents,
    errors: ["overloaded"],
  },
];
