/**
 * The ingest listener's app: OTLP/HTTP `POST /v1/logs`, `/v1/traces` and
 * `/v1/metrics` (DESIGN §4), answered as OTLP prescribes.
 *
 * @module
 */
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
import type { KeyVerifier } from "../store/keys.ts";
import type { TelemetryWriter } from "../store/telemetry_writer.ts";
import { authenticateIngestRequest } from "./auth.ts";
import { ApiError, errorResponse, jsonResponse, textResponse } from "./responses.ts";

/** What the ingest app needs. */
export interface IngestAppDeps {
  keys: KeyVerifier;
  writer: TelemetryWriter;
  maxBytes: number;
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
  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return jsonResponse({ status: "ok" });
    const pathSignal = PATHS[url.pathname];
    if (pathSignal === undefined) return textResponse(404, "404 page not found");
    if (request.method !== "POST") {
      return textResponse(405, "Method Not Allowed", { allow: "POST" });
    }
    try {
      const sender = authenticateIngestRequest(request, deps.keys);
      const encoding = encodingOf(request.headers.get("content-type"));
      const body = await readBody(request, deps.maxBytes);
      const received = receiveExport(body, { encoding, pathSignal });
      try {
        deps.writer.ingest(sender, received.events);
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

function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: number })?.errcode;
  return code === 5 || code === 6 || (typeof code === "number" && (code & 0xff) === 5);
}
