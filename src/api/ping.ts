/**
 * `GET /v1/ping` (docs/api.md §4.1).
 *
 * @module
 */
import type { Route } from "../http/router.ts";
import { jsonResponse } from "../http/responses.ts";
import type { ApiHandler } from "./context.ts";

/** The service name of `/v1/ping` and `version`. */
export const SERVICE_NAME = "agent-telemetry";

/** Routes of this module. */
export const pingRoutes: Route<ApiHandler>[] = [
  {
    pattern: "/v1/ping",
    handler: ({ services }) => jsonResponse({ service: SERVICE_NAME, version: services.version }),
  },
];
