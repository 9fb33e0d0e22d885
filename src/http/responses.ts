/**
 * The one error type of the HTTP layer and the one place that turns errors
 * into the spec's response bodies.
 *
 * @module
 */
import { QueryQueueFullError, QueryTimeoutError } from "../errors.ts";

/** Error codes of spec §7. */
export type ErrorCode =
  | "invalid_request"
  | "unauthenticated"
  | "not_found"
  | "internal"
  | "not_implemented"
  | "keystore_unavailable"
  | "overloaded";

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

/** The spec's error body for any error; unexpected ones are logged and hidden. */
export function errorResponse(error: unknown, log: (error: unknown) => void): Response {
  if (error instanceof ApiError) {
    return jsonResponse({ error: { code: error.code, message: error.message } }, error.status);
  }
  if (error instanceof QueryQueueFullError) {
    return jsonResponse(
      { error: { code: "overloaded", message: "too many queries in progress; retry later" } },
      503,
      { "retry-after": "1" },
    );
  }
  if (error instanceof QueryTimeoutError) {
    return jsonResponse({
      error: {
        code: "internal",
        message: "query exceeded the time limit; narrow the time range or filters and retry",
      },
    }, 500);
  }
  log(error);
  return jsonResponse({ error: { code: "internal", message: "internal error; retry later" } }, 500);
}
