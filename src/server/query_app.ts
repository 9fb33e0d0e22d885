/**
 * The query listener's app: `/healthz`, `/readyz`, the `/v1/` API and its
 * OpenAPI document, checked in the order docs/api.md §10.1 fixes — unknown path (404
 * text), method (405 text), auth (401/503; not for the document),
 * parameters (400), lookup (404 JSON).
 *
 * @module
 */
import type { ApiRoute, ApiServices } from "../api/context.ts";
import { exportRoutes } from "../api/export.ts";
import { dimensionRoutes } from "../api/dimensions.ts";
import { fleetRoutes } from "../api/fleet.ts";
import { OPENAPI_PATH, openApiDocument } from "../api/openapi.ts";
import { pingRoutes } from "../api/ping.ts";
import { sessionRoutes } from "../api/sessions.ts";
import { toolCallRoutes } from "../api/tool_calls.ts";
import { unmappedEventRoutes } from "../api/unmapped_events.ts";
import type { KeyVerifier } from "../store/stores.ts";
import { authenticateApiRequest } from "../http/auth.ts";
import type { ServiceMetrics } from "../http/metrics.ts";
import { observed } from "../http/observe.ts";
import { errorResponse, jsonResponse, textResponse } from "../http/responses.ts";
import { createRouter } from "../http/router.ts";
import { isUiPath, uiResponse } from "../ui/mod.ts";

/** What the query app needs. */
export interface QueryAppDeps extends ApiServices {
  keys: KeyVerifier;
  /** Extra routes (e.g. insights), assembled with the built-in ones. */
  routes?: readonly ApiRoute[];
  metrics: ServiceMetrics;
  /** Resolves when the stores are writable and a query answers; rejects with the reason. */
  readiness: () => Promise<void>;
  logError: (error: unknown) => void;
}

/** Every route of the `/v1/` API behind the key: the built-in ones, `extra`, then the exports. */
export function queryRoutes(extra: readonly ApiRoute[] = []): ApiRoute[] {
  return [
    ...pingRoutes,
    ...sessionRoutes,
    ...toolCallRoutes,
    ...unmappedEventRoutes,
    ...fleetRoutes,
    ...dimensionRoutes,
    ...extra,
    ...exportRoutes,
  ];
}

/** Builds the query listener's request handler. */
export function createQueryApp(deps: QueryAppDeps): (request: Request) => Promise<Response> {
  const routes = queryRoutes(deps.routes);
  const match = createRouter(routes);
  const openApi = JSON.stringify(openApiDocument(routes, deps.version));
  const app = async (request: Request): Promise<Response> => {
    const tooLarge = requestTooLarge(request);
    if (tooLarge) return tooLarge;
    const url = new URL(request.url);
    const ui = uiResponse(request, url);
    if (ui) return ui;
    if (url.pathname === "/healthz" || url.pathname === "/readyz") {
      if (request.method !== "GET") return methodNotAllowed();
      return url.pathname === "/healthz"
        ? jsonResponse({ status: "ok" })
        : await readyResponse(deps.readiness);
    }
    if (url.pathname === OPENAPI_PATH) {
      if (request.method !== "GET") return methodNotAllowed();
      return new Response(openApi, { headers: { "content-type": "application/json" } });
    }
    const route = match(url.pathname);
    if (!route) return textResponse(404, "404 page not found");
    if (request.method !== "GET") return methodNotAllowed();
    try {
      const principal = await authenticateApiRequest(request, deps.keys);
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
  return observed(app, {
    listener: "query",
    metrics: deps.metrics,
    routeOf: (path) =>
      path === "/healthz" || path === "/readyz" || path === OPENAPI_PATH
        ? path
        : match(path)?.pattern ?? (isUiPath(path) ? "/ui/" : "unmatched"),
  });
}

/** `/readyz`: 200 when the stores are writable and a query answers, else 503 with the reason. */
export async function readyResponse(readiness: () => Promise<void>): Promise<Response> {
  try {
    await readiness();
    return jsonResponse({ status: "ready" });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return jsonResponse({ status: "unavailable", reason }, 503);
  }
}

const MAX_URL_BYTES = 8192;
const MAX_HEADER_BYTES = 16384;

/** 414 or 431 for a request whose URL or headers pass the limits, else null. */
export function requestTooLarge(request: Request): Response | null {
  if (request.url.length > MAX_URL_BYTES) return textResponse(414, "URI Too Long");
  let headerBytes = 0;
  for (const [name, value] of request.headers) headerBytes += name.length + value.length + 4;
  if (headerBytes > MAX_HEADER_BYTES) return textResponse(431, "Request Header Fields Too Large");
  return null;
}

function methodNotAllowed(): Response {
  return textResponse(405, "Method Not Allowed", { allow: "GET" });
}
