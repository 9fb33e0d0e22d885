/**
 * The ingest listener's app: OTLP/HTTP `POST /v1/logs`, `/v1/traces` and
 * `/v1/metrics` (docs/design.md §4), answered as OTLP prescribes, plus `/healthz`,
 * `/readyz` and the Prometheus `/metrics`. The export itself is
 * `otlp_export.ts`, shared with the gRPC listener.
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { MetricsAccess } from "../config.ts";
import { encodeExportResponse, encodingOf, readBody, type Signal } from "../ingest/otlp/mod.ts";
import type { KeyVerifier } from "../store/stores.ts";
import type { TelemetryWriterApi } from "../store/stores.ts";
import { bearerToken } from "../http/auth.ts";
import type { ServiceMetrics } from "../http/metrics.ts";
import { observed } from "../http/observe.ts";
import {
  type OtlpExportOutcome,
  receiveOtlpExport,
  REFUSALS,
  retryAfterOf,
} from "./otlp_export.ts";
import { readyResponse, requestTooLarge } from "./query_app.ts";
import { errorResponse, jsonResponse, textResponse } from "../http/responses.ts";

/** What the ingest app needs. */
export interface IngestAppDeps {
  keys: KeyVerifier;
  /** Null on a read-only node: exports are refused with 503. */
  writer: TelemetryWriterApi | null;
  maxBytes: number;
  metrics: ServiceMetrics;
  /** The resource attributes kept per session (`--dimension`). */
  dimensionKeys?: readonly string[];
  readiness: () => Promise<void>;
  logError: (error: unknown) => void;
  /** Called after a request's events are committed. */
  onCommitted?: () => void;
  /** Who may read `/metrics` (`--metrics-token`; open on loopback only). */
  metricsAccess: MetricsAccess;
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
    let outcome: OtlpExportOutcome;
    try {
      outcome = await receiveOtlpExport(deps, {
        authorization: request.headers.get("authorization"),
        pathSignal,
        readBody: async () => {
          const encoding = encodingOf(request.headers.get("content-type"));
          return { encoding, body: await readBody(request, deps.maxBytes) };
        },
      });
    } catch (error) {
      return errorResponse(error, deps.logError);
    }
    if (!outcome.accepted) {
      const { http: status, code } = REFUSALS[outcome.refusal];
      const retry = retryAfterOf(outcome);
      return jsonResponse(
        { error: { code, message: outcome.message } },
        status,
        retry === undefined ? {} : { "retry-after": String(retry) },
      );
    }
    const answer = encodeExportResponse(outcome.signal, outcome.encoding, outcome.partial);
    return new Response(answer.body as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": answer.contentType },
    });
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
  const refused = metricsRefusal(request, deps.metricsAccess);
  if (refused) return refused;
  return new Response(deps.metrics.render(), {
    headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
  });
}

/** 401 or 403 in the JSON error shape unless the request may read `/metrics`, else null. */
function metricsRefusal(request: Request, access: MetricsAccess): Response | null {
  if (access.kind === "open") return null;
  if (access.kind === "refused") {
    return jsonResponse({
      error: {
        code: "forbidden",
        message:
          "/metrics is not served on a non-loopback listener without a token; start with --metrics-token",
      },
    }, 403);
  }
  const given = bearerToken(request.headers.get("authorization")) ?? "";
  const digest = (text: string) => createHash("sha256").update(text).digest();
  if (timingSafeEqual(digest(given), digest(access.token))) return null;
  return jsonResponse(
    { error: { code: "unauthenticated", message: "invalid or missing Bearer credential" } },
    401,
    { "www-authenticate": "Bearer" },
  );
}
