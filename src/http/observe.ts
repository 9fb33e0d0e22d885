/**
 * Wraps a listener's handler with a request id, one structured log line per
 * request (method, route, status, duration — never keys or payloads) and the
 * request metrics.
 *
 * @module
 */
import { log } from "../log.ts";
import type { ServiceMetrics } from "./metrics.ts";

/** The listeners whose requests are counted. */
export type Listener = "query" | "ingest" | "grpc";

/** Options of {@link observed}. */
export interface ObserveOptions {
  listener: Listener;
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
    recordRequest(options.metrics, {
      requestId,
      listener: options.listener,
      method: request.method,
      route: options.routeOf(new URL(request.url).pathname),
      status: response.status,
      seconds: (performance.now() - started) / 1000,
    });
    response.headers.set("x-request-id", requestId);
    return response;
  };
}

/** One finished request, as counted and logged. */
export interface RequestRecord {
  requestId: string;
  listener: Listener;
  method: string;
  /** A bounded route label: a pattern or a known path, never the raw path. */
  route: string;
  /** The HTTP status, or a gRPC status name on the gRPC listener. */
  status: number | string;
  seconds: number;
}

/**
 * Counts a request in the metrics and writes its log line; for listeners
 * whose answers are not `Response`s (gRPC), which cannot use {@link observed}.
 */
export function recordRequest(metrics: ServiceMetrics, record: RequestRecord): void {
  const { listener, route, status, seconds } = record;
  metrics.requests.inc({ listener, route, status: String(status) });
  metrics.latency.observe({ listener, route }, seconds);
  log("info", "request", {
    request_id: record.requestId,
    listener,
    method: record.method,
    route,
    status,
    duration_ms: Math.round(seconds * 1e6) / 1e3,
  });
}
