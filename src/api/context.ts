/**
 * What every query-API handler receives.
 *
 * @module
 */
import type { TelemetryReader } from "../store/stores.ts";
import type { ActorNames } from "./actor_names.ts";

/** Services the handlers read from. */
export interface ApiServices {
  reader: TelemetryReader;
  version: string;
  /** The installation's cursor secret (key store, never served): keys the HMAC of page cursors. */
  cursorSecret: Uint8Array;
  /** Actors' names from the key store, for `actor_name` beside `actor_id`. */
  actorNames: ActorNames;
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
