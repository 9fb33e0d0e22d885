/**
 * Wraps a listener's handler with a request id, one structured log line per
 * request at `debug` (method, route, status, duration — never keys or
 * payloads), a summary line of the requests at `info` once a minute, and the
 * request metrics.
 *
 * @module
 */
import { log, type LogFields } from "../log.ts";
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
  requestSummary.add(listener, status);
  log("debug", "request", {
    request_id: record.requestId,
    listener,
    method: record.method,
    route,
    status,
    duration_ms: Math.round(seconds * 1e6) / 1e3,
  });
}

/** How often the `info` summary of the requests is written, at most. */
export const SUMMARY_EVERY_MS = 60_000;

/**
 * Counts requests by listener and status class and writes one summary line
 * when a request arrives a minute or more after the last summary (no timer:
 * a quiet server writes nothing). A busy server's `info` log stays one line a
 * minute, not one per request; `--log-level debug` adds every request.
 */
export class RequestSummary {
  readonly #now: () => number;
  readonly #write: (fields: LogFields) => void;
  #since: number;
  #counts = new Map<string, number>();

  constructor(
    now: () => number = () => performance.now(),
    write: (fields: LogFields) => void = (fields) => log("info", "requests", fields),
  ) {
    this.#now = now;
    this.#write = write;
    this.#since = now();
  }

  /** Counts one answered request (an HTTP status, or a gRPC status name); writes the summary when its minute is over. */
  add(listener: Listener, status: number | string): void {
    const key = `${listener} ${
      typeof status === "number" ? `${Math.floor(status / 100)}xx` : status
    }`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
    const now = this.#now();
    if (now - this.#since < SUMMARY_EVERY_MS) return;
    this.#write({
      seconds: Math.round((now - this.#since) / 1000),
      requests: Object.fromEntries([...this.#counts].sort(([a], [b]) => a < b ? -1 : 1)),
    });
    this.#counts = new Map();
    this.#since = now;
  }
}

const requestSummary = new RequestSummary();
