/**
 * The query listener's app: `/healthz` and the `/v1/` API, checked in the
 * order DESIGN §6 fixes — unknown path (404 text), method (405 text), auth
 * (401/503), parameters (400), lookup (404 JSON).
 *
 * @module
 */
import type { ApiHandler, ApiServices } from "../api/context.ts";
import { pingRoutes } from "../api/ping.ts";
import { sessionRoutes } from "../api/sessions.ts";
import { toolCallRoutes } from "../api/tool_calls.ts";
import type { KeyVerifier } from "../store/keys.ts";
import { authenticateApiRequest } from "./auth.ts";
import { errorResponse, jsonResponse, textResponse } from "./responses.ts";
import { createRouter, type Route } from "./router.ts";

/** What the query app needs. */
export interface QueryAppDeps extends ApiServices {
  keys: KeyVerifier;
  /** Extra routes (e.g. insights), assembled with the built-in ones. */
  routes?: Route<ApiHandler>[];
  logError: (error: unknown) => void;
}

/** Builds the query listener's request handler. */
export function createQueryApp(deps: QueryAppDeps): (request: Request) => Promise<Response> {
  const match = createRouter<ApiHandler>([
    ...pingRoutes,
    ...sessionRoutes,
    ...toolCallRoutes,
    ...(deps.routes ?? []),
  ]);
  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") {
      if (request.method !== "GET") return methodNotAllowed();
      return jsonResponse({ status: "ok" });
    }
    const route = match(url.pathname);
    if (!route) return textResponse(404, "404 page not found");
    if (request.method !== "GET") return methodNotAllowed();
    try {
      const principal = authenticateApiRequest(request, deps.keys);
      return await route.handler({
        url,
        params: route.params,
        orgId: principal.orgId,
        services: deps,
      });
    } catch (error) {
      return errorResponse(error, deps.logError);
    }
  };
}

function methodNotAllowed(): Response {
  return textResponse(405, "Method Not Allowed", { allow: "GET" });
}
