/**
 * What every query-API handler receives.
 *
 * @module
 */
import type { z } from "zod";
import type { ErrorCode } from "../http/responses.ts";
import type { Route } from "../http/router.ts";
import type { TelemetryReader } from "../store/stores.ts";
import type { Clock } from "../time.ts";
import type { ActorNames } from "./actor_names.ts";

/** Services the handlers read from. */
export interface ApiServices {
  reader: TelemetryReader;
  version: string;
  /** The installation's cursor secret (key store, never served): keys the HMAC of page cursors. */
  cursorSecret: Uint8Array;
  /** Actors' names from the key store, for `actor_name` beside `actor_id`. */
  actorNames: ActorNames;
  /** What "now" is for answers relative to the request time (the fleet's). */
  clock: Clock;
  /** Aborted when the server stops: a long answer (an export) ends then, not when its client has read it. */
  stopping?: AbortSignal;
}

/** One authenticated request, routed. */
export interface ApiContext {
  url: URL;
  params: Record<string, string>;
  orgId: string;
  services: ApiServices;
}

/** A query-API handler. */
export type ApiHandler = (context: ApiContext) => Promise<Response> | Response;

/** The document's group of an operation. */
export type ApiTag =
  | "service"
  | "sessions"
  | "tool-calls"
  | "insights"
  | "unmapped-events"
  | "fleet"
  | "export";

/**
 * A query-API route: what the router matches and runs, and what the OpenAPI
 * document (`openapi.ts`) says of it, from the schemas the handler parses
 * its query with and answers with.
 */
export interface ApiRoute extends Route<ApiHandler> {
  tag: ApiTag;
  /** One line: what it returns. */
  summary: string;
  /** The rules a client needs beyond the schemas: order, scope, limits. */
  description?: string;
  /** The schema the handler parses the query string with: the query parameters. */
  query?: z.ZodObject;
  /** Each `:name` segment of the pattern, described. */
  pathParams?: Readonly<Record<string, string>>;
  /** The body of a 200 (`schemas.ts`); with `body: "ndjson"`, each line's. */
  response: z.ZodType;
  /** How a 200 is sent: one JSON document (the default), or NDJSON, one `response` per line. */
  body?: "json" | "ndjson";
  /**
   * The error codes it answers beyond those of every route behind the key
   * (`unauthenticated`, `keystore_unavailable`, `internal`).
   */
  errors: readonly ErrorCode[];
}

/** `/v1/<tag>/:id`: one item of a list by its id (`id`, described), or `not_found`. */
export function itemRoute(
  tag: "sessions" | "tool-calls",
  handler: ApiHandler,
  summary: string,
  id: string,
  response: ApiRoute["response"],
): ApiRoute {
  return {
    pattern: `/v1/${tag}/:id`,
    handler,
    tag,
    summary,
    pathParams: { id },
    response,
    errors: ["not_found", "overloaded"],
  };
}
