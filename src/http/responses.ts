/**
 * The one error type of the HTTP layer and the one place that turns errors
 * into the spec's response bodies.
 *
 * @module
 */
import {
  QueryQueueFullError,
  QueryTimeoutError,
  ReplicaBuildingError,
  ReplicaUnwritableError,
} from "../errors.ts";

/** Error codes of docs/api.md §7. */
export type ErrorCode =
  | "invalid_request"
  | "unauthenticated"
  | "not_found"
  | "internal"
  | "not_implemented"
  | "keystore_unavailable"
  | "overloaded"
  | "insights_unavailable";

/** An error with its HTTP status, code and client-facing message. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(readonly status: number, readonly code: ErrorCode, message: string) {
    super(message);
  }
}

/** A 400 `invalid_request` naming the problem. */
export function invalidRequest(message: string): ApiError {
  return new ApiError(400, "invalid_request", message);
}

/** A JSON response. */
export function jsonResponse(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/** A plain-text response (unknown paths, wrong methods). */
export function textResponse(status: number, text: string, headers: HeadersInit = {}): Response {
  return new Response(text, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", ...headers },
  });
}

/** How the query API answers one kind of engine-neutral error. */
interface ErrorAnswer {
  status: number;
  code: ErrorCode;
  message: string;
  retryAfterSeconds?: number;
}

/**
 * The one table from an engine-neutral error class (`src/errors.ts`, raised
 * by either engine) to its status, code and message, so no listener knows
 * which engine failed. A write the store refuses for a while
 * (`StoreUnavailableError`) is a refusal of the export path, whose listeners
 * answer it in their own protocol (`otlp_export.ts`).
 */
const NEUTRAL_ERROR_ANSWERS: ReadonlyArray<readonly [new (message: string) => Error, ErrorAnswer]> =
  [
    [QueryQueueFullError, {
      status: 503,
      code: "overloaded",
      message: "too many queries in progress; retry later",
      retryAfterSeconds: 1,
    }],
    [ReplicaBuildingError, {
      status: 503,
      code: "insights_unavailable",
      message: "insights are being prepared: the analytics replica is being built; retry later",
      retryAfterSeconds: 2,
    }],
    [ReplicaUnwritableError, {
      status: 503,
      code: "insights_unavailable",
      message:
        "insights are unavailable: the analytics replica cannot be written (disk full or read-only); retry later",
      retryAfterSeconds: 30,
    }],
    [QueryTimeoutError, {
      status: 500,
      code: "internal",
      message: "query exceeded the time limit; narrow the time range or filters and retry",
    }],
  ];

/** The spec's error body for any error; unexpected ones are logged and hidden. */
export function errorResponse(error: unknown, log: (error: unknown) => void): Response {
  if (error instanceof ApiError) {
    return jsonResponse({ error: { code: error.code, message: error.message } }, error.status);
  }
  const answer = NEUTRAL_ERROR_ANSWERS.find(([type]) => error instanceof type)?.[1];
  if (answer) {
    const { status, code, message, retryAfterSeconds } = answer;
    const headers: Record<string, string> = retryAfterSeconds === undefined
      ? {}
      : { "retry-after": String(retryAfterSeconds) };
    return jsonResponse({ error: { code, message } }, status, headers);
  }
  log(error);
  return jsonResponse({ error: { code: "internal", message: "internal error; retry later" } }, 500);
}
