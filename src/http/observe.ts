/**
 * Wraps a listener's handler with a request id, one structured log line per
 * request (method, route, status, duration — never keys or payloads) and the
 * request metrics.
 *
 * @module
 */
import { log } from "../log.ts";
import type { ServiceMetrics } from "./metrics.ts";

/** Options of {@link observed}. */
export interface ObserveOptions {
  listener: "query" | "ingest";
  metrics: ServiceMetrics;
  /** The route pattern of a path, to keep metric labels bounded. */
  routeOf: (path: string) => string;
}

/** The handler, observed. */
export function observed(
  handler: (request: Request) => Promise<Response>,
  options: ObserveOptions,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const started = performance.now();
    const requestId = crypto.randomUUID();
    const response = await handler(request);
    const seconds = (performance.now() - started) / 1000;
    const route = options.routeOf(new URL(request.url).pathname);
    const labels = { listener: options.listener, route, status: String(response.status) };
    options.metrics.requests.inc(labels);
    options.metrics.latency.observe({ listener: options.listener, route }, seconds);
    log("info", "request", {
      request_id: requestId,
      listener: options.listener,
      method: request.method,
      route,
      status: response.status,
      duration_ms: Math.round(seconds * 1e6) / 1e3,
    });
    response.headers.set("x-request-id", requestId);
    return response;
  };
}
