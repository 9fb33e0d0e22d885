/**
 * `GET /v1/ping` (docs/api.md §4.1).
 *
 * @module
 */
import { jsonResponse } from "../http/responses.ts";
import type { ApiRoute } from "./context.ts";
import { Ping } from "./schemas.ts";

/** The service name of `/v1/ping` and `version`. */
export const SERVICE_NAME = "agent-telemetry";

/** Routes of this module. */
export const pingRoutes: ApiRoute[] = [
  {
    pattern: "/v1/ping",
    tag: "service",
    summary: "The service's name and version",
    response: Ping,
    errors: [],
    handler: ({ services }) => jsonResponse({ service: SERVICE_NAME, version: services.version }),
  },
];
