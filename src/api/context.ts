/**
 * What every query-API handler receives.
 *
 * @module
 */
import type { TelemetryReader } from "../store/stores.ts";

/** Services the handlers read from. */
export interface ApiServices {
  reader: TelemetryReader;
  version: string;
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
