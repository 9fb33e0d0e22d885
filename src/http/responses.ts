/**
 * The one error type of the HTTP layer and the one place that turns errors
 * into the spec's response bodies.
 *
 * @module
 */
import {
  NamedError,
  QueryQueueFullError,
  QueryTimeoutError,
  ReplicaBuildingError,
  ReplicaUnwritableError,
} from "../errors.ts";

/**
 * The error codes of docs/api.md §7 and README's additions (`overloaded`,
 * `insights_unavailable`), each with the one HTTP status it is answered with.
 */
export const ERROR_STATUS = {
  "invalid_request": 400,
  "unauthenticated": 401,
  "not_found": 404,
  "internal": 500,
  "not_implemented": 501,
  "keystore_unavailable": 503,
  "overloaded": 503,
  "insights_unavailable": 503,
} as const;

/** An error code of the query API. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** An error with its code, client-facing message and the code's HTTP status. */
export class ApiError extends NamedError {
  readonly status: number;
  constructor(readonly code: ErrorCode, message: string) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

/** A 400 `invalid_request` naming the problem. */
export function invalidRequest(message: string): ApiError {
  return new ApiError("invalid_request", message);
}

/** The media type of newline-delimited JSON (one JSON value per line, UTF-8). */
export const NDJSON_TYPE = "application/x-ndjson";

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
      code: "overloaded",
      message: "too many queries in progress; retry later",
      retryAfterSeconds: 1,
    }],
    [ReplicaBuildingError, {
      code: "insights_unavailable",
      message: "insights are being prepared: the analytics replica is being built; retry later",
      retryAfterSeconds: 2,
    }],
    [ReplicaUnwritableError, {
      code: "insights_unavailable",
      message:
        "insights are unavailable: the analytics replica cannot be written (disk full or read-only); retry later",
      retryAfterSeconds: 30,
    }],
    [QueryTimeoutError, {
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
    const { code, message, retryAfterSeconds } = answer;
    const headers: Record<string, string> = retryAfterSeconds === undefined
      ? {}
      : { "retry-after": String(retryAfterSeconds) };
    return jsonResponse({ error: { code, message } }, ERROR_STATUS[code], headers);
  }
  log(error);
  return jsonResponse(
    { error: { code: "internal", message: "internal error; retry later" } },
    ERROR_STATUS.internal,
  );
}
