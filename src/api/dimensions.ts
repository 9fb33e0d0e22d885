/**
 * Dimensions (docs/api.md §4.22; an extension): the sessions' dimensions
 * that lists and details serve (from their rows), and `GET /v1/dimensions`,
 * each key's values.
 *
 * @module
 */
import { jsonResponse } from "../http/responses.ts";
import type { TelemetryReader } from "../store/stores.ts";
import type { ApiHandler, ApiRoute } from "./context.ts";
import { Dimensions } from "./schemas.ts";
import type { DimensionMap } from "./shapes.ts";

type Row = Record<string, unknown>;

/** Values per key `GET /v1/dimensions` lists at most. */
const MAX_VALUES = 1000;

/** The sessions with every dimension of `dims` (not empty), sorted: what narrows an insight. */
export async function dimensionSessions(
  reader: TelemetryReader,
  orgId: string,
  dims: readonly (readonly [string, string])[],
): Promise<string[]> {
  const [rows] = await reader.read([reader.queries.dimensionSessions(orgId, dims)]);
  return (rows as Row[]).map((row) => String(row.session_id));
}

/**
 * The dimensions of rows' sessions, by session id, from what their SQL
 * aggregated per row (`dimensions`, a JSON object as text).
 */
export function rowDimensions(rows: readonly Row[]): DimensionMap {
  const dims = new Map<string, Record<string, string>>();
  for (const row of rows) {
    if (typeof row.dimensions === "string") {
      dims.set(String(row.session_id), JSON.parse(row.dimensions));
    }
  }
  return dims;
}

const listDimensions: ApiHandler = async ({ orgId, services }) => {
  const [values, drops] = await services.reader.read(
    services.reader.queries.dimensions(orgId),
  ) as Row[][];
  const keys = new Map<string, { key: string; values: string[]; dropped_values: number }>();
  const keyOf = (key: string) => {
    let entry = keys.get(key);
    if (!entry) keys.set(key, entry = { key, values: [], dropped_values: 0 });
    return entry;
  };
  for (const row of values!) {
    const entry = keyOf(String(row.key));
    if (entry.values.length < MAX_VALUES) entry.values.push(String(row.value));
  }
  for (const row of drops!) keyOf(String(row.key)).dropped_values = Number(row.dropped);
  const data = [...keys.values()].sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  return jsonResponse({ data });
};

/** Routes of this module. */
export const dimensionRoutes: ApiRoute[] = [
  {
    pattern: "/v1/dimensions",
    handler: listDimensions,
    tag: "sessions",
    summary:
      "**Extension.** The organization's dimension keys and their values, for `dim.<key>=<value>`",
    description:
      "Each key kept by `--dimension` that a session of the organization reported, sorted by key, with its values sorted (by Unicode code point, at most 1,000) and how many reported values a bound dropped (`dropped_values`).",
    response: Dimensions,
    errors: ["overloaded"],
  },
];
