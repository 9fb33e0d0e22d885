/**
 * The ingest listener's app: OTLP/HTTP `POST /v1/logs`, `/v1/traces` and
 * `/v1/metrics` (DESIGN §4), answered as OTLP prescribes, plus `/healthz`,
 * `/readyz` and the Prometheus `/metrics`.
 *
 * @module
 */
import { isRetryable, isUnavailable } from "../store/postgres/client.ts";
import { receiveExport } from "../ingest/receive.ts";
import {
  encodeExportResponse,
  encodingOf,
  OtlpDecodeError,
  PayloadTooLargeError,
  readBody,
  type Signal,
  UnsupportedMediaTypeError,
} from "../ingest/otlp/mod.ts";
import type { TelemetryEvent } from "../ingest/types.ts";
import type { KeyVerifier } from "../store/stores.ts";
import type { TelemetryWriterApi } from "../store/stores.ts";
import { authenticateIngestRequest } from "./auth.ts";
import type { ServiceMetrics } from "./metrics.ts";
import { observed } from "./observe.ts";
import { readyResponse, requestTooLarge } from "./query_app.ts";
import { ApiError, errorResponse, jsonResponse, textResponse } from "./responses.ts";

/** What the ingest app needs. */
export interface IngestAppDeps {
  keys: KeyVerifier;
  /** Null on a read-only node: exports are refused with 503. */
  writer: TelemetryWriterApi | null;
  maxBytes: number;
  metrics: ServiceMetrics;
  readiness: () => Promise<void>;
  logError: (error: unknown) => void;
  /** Called after a request's events are committed. */
  onCommitted?: () => void;
}

const PATHS: Record<string, Signal> = {
  "/v1/logs": "logs",
  "/v1/traces": "traces",
  "/v1/metrics": "metrics",
};

/** Builds the ingest listener's request handler. */
export function createIngestApp(deps: IngestAppDeps): (request: Request) => Promise<Response> {
  const app = async (request: Request): Promise<Response> => {
    const tooLarge = requestTooLarge(request);
    if (tooLarge) return tooLarge;
    const url = new URL(request.url);
    const pathSignal = PATHS[url.pathname];
    if (pathSignal === undefined) return serviceEndpoint(url.pathname, request, deps);
    if (request.method !== "POST") {
      return textResponse(405, "Method Not Allowed", { allow: "POST" });
    }
    if (deps.writer === null) {
      return jsonResponse(
        {
          error: {
            code: "read_only",
            message: "this node is read-only; send telemetry to the primary",
          },
        },
        503,
      );
    }
    const writer = deps.writer;
    try {
      const sender = await authenticateIngestRequest(request, deps.keys);
      const encoding = encodingOf(request.headers.get("content-type"));
      const body = await readBody(request, deps.maxBytes);
      const received = receiveExport(body, { encoding, pathSignal });
      try {
        await writer.ingest(sender, received.events);
      } catch (error) {
        if (isBusy(error)) {
          return jsonResponse(
            { error: { code: "unavailable", message: "the store is busy; retry later" } },
            503,
            { "retry-after": "1" },
          );
        }
        throw error;
      }
      deps.onCommitted?.();
      countIngested(deps.metrics, received.events, received.unusable);
      const partial = received.unusable > 0
        ? {
          rejected: received.unusable,
          message: `${received.unusable} unusable record(s): ${received.firstReason}`,
        }
        : undefined;
      const answer = encodeExportResponse(received.signal, encoding, partial);
      return new Response(answer.body as Uint8Array<ArrayBuffer>, {
        headers: { "content-type": answer.contentType },
      });
    } catch (error) {
      return errorResponse(toApiError(error), deps.logError);
    }
  };
  return observed(app, {
    listener: "ingest",
    metrics: deps.metrics,
    routeOf: (path) => path in PATHS || SERVICE_PATHS.includes(path) ? path : "unmatched",
  });
}

const SERVICE_PATHS = ["/healthz", "/readyz", "/metrics"];

async function serviceEndpoint(
  path: string,
  request: Request,
  deps: IngestAppDeps,
): Promise<Response> {
  if (!SERVICE_PATHS.includes(path)) return textResponse(404, "404 page not found");
  if (request.method !== "GET") return textResponse(405, "Method Not Allowed", { allow: "GET" });
  if (path === "/healthz") return jsonResponse({ status: "ok" });
  if (path === "/readyz") return await readyResponse(deps.readiness);
  return new Response(deps.metrics.render(), {
    headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
  });
}

function countIngested(metrics: ServiceMetrics, events: TelemetryEvent[], unusable: number) {
  const counts = new Map<string, { agent: string; kind: string; n: number }>();
  for (const event of events) {
    const key = `${event.agentSystem}\u0000${event.kind}`;
    const entry = counts.get(key);
    if (entry) entry.n++;
    else counts.set(key, { agent: event.agentSystem, kind: event.kind, n: 1 });
  }
  for (const { agent, kind, n } of counts.values()) metrics.ingested.inc({ agent, kind }, n);
  if (unusable > 0) metrics.rejected.inc({}, unusable);
}

function toApiError(error: unknown): unknown {
  if (error instanceof PayloadTooLargeError) {
    return new ApiError(413, "invalid_request", error.message);
  }
  if (error instanceof UnsupportedMediaTypeError) {
    return new ApiError(415, "invalid_request", error.message);
  }
  if (error instanceof OtlpDecodeError) return new ApiError(400, "invalid_request", error.message);
  return error;
}

/**
 * SQLITE_BUSY or SQLITE_LOCKED, including their extended codes (`node:sqlite`
 * sets `errcode` on statement errors but not on `exec` errors (BEGIN), whose
 * message is then SQLite's own text); or PostgreSQL out of reach, or a
 * deadlock that outlived the writer's retries. Nothing was stored.
 */
function isBusy(error: unknown): boolean {
  if (isUnavailable(error) || isRetryable(error)) return true;
  const code = (error as { errcode?: unknown })?.errcode;
  if (typeof code === "number") return (code & 0xff) === 5 || (code & 0xff) === 6;
  return error instanceof Error && /^database (table )?is locked/.test(error.message);
}
