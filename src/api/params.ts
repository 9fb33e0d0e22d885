/**
 * Query-parameter schemas shared by the endpoints (zod), with messages that
 * name the problem as docs/api.md §7 shapes them. Each endpoint's query schema is
 * also what the OpenAPI document (`openapi.ts`) says of its parameters: a
 * schema's `meta` describes the parameter as a client sends it (its type on
 * the wire, bounds, description) and its default is what it parses an
 * absent value to.
 *
 * @module
 */
import { z } from "zod";
import { DIMENSION_KEY_PATTERN, DIMENSION_LIMITS } from "../config.ts";
import { invalidRequest } from "../http/responses.ts";

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** `limit`: an integer 1–500, default 50. */
export const limitParam = z.string().optional().transform((raw, ctx) => {
  if (raw === undefined) return 50;
  if (!/^-?\d+$/.test(raw)) {
    ctx.addIssue({
      code: "custom",
      message: `invalid limit: ${JSON.stringify(raw)} (must be an integer from 1 to 500)`,
    });
    return z.NEVER;
  }
  const value = Number(raw);
  if (value > 500) ctx.addIssue({ code: "custom", message: `invalid limit: ${raw} > 500` });
  else if (value < 1) ctx.addIssue({ code: "custom", message: `invalid limit: ${raw} < 1` });
  return value;
}).meta({
  description: "Page size, 1 to 500.",
  type: "integer",
  minimum: 1,
  maximum: 500,
});

/** `cursor`: the previous page's `next_cursor`; decoded by the endpoint's cursor binding. */
export const cursorParam = z.string().optional().meta({
  description:
    "The `next_cursor` of the previous page, unchanged, sent with the same filters (`limit` may change). A cursor sent with other filters, altered or not decodable is 400 `invalid_request`.",
});

/** Milliseconds since the epoch of an RFC 3339 timestamp with a zone, or null. */
export function parseRfc3339(text: string): number | null {
  const match = RFC3339.exec(text);
  if (!match) return null;
  const [, year, month, day, hour, minute, second] = match.map(Number) as number[];
  const date = new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!));
  if (
    date.getUTCMonth() !== month! - 1 || date.getUTCDate() !== day! || hour! > 23 ||
    minute! > 59 || second! > 60
  ) return null;
  const ms = Date.parse(text.toUpperCase());
  return Number.isNaN(ms) ? null : ms;
}

/** `after`/`before`: inclusive RFC 3339 bounds with a zone. */
export function timeParam(name: "after" | "before") {
  return z.string().optional().transform((raw, ctx) => {
    if (raw === undefined) return undefined;
    const ms = parseRfc3339(raw);
    if (ms === null) {
      ctx.addIssue({
        code: "custom",
        message: `invalid ${name}: ${
          JSON.stringify(raw)
        } (must be RFC 3339 with a time zone, e.g. 2026-11-22T10:00:00Z; send + as %2B)`,
      });
      return z.NEVER;
    }
    return ms;
  }).meta({
    description: `Only tool calls ${
      name === "after" ? "at or after" : "at or before"
    } this instant (inclusive): RFC 3339 with a time zone, \`Z\` or an offset (send \`+\` as \`%2B\`).`,
    format: "date-time",
  });
}

/** An exact-match filter; an empty value means no filter. */
export const exactParam = z.string().optional().transform((raw) => raw === "" ? undefined : raw);

/** `actor` (docs/api.md §4.2.1): one actor telemetry id. */
export const actorParam = exactParam.meta({
  description:
    "Only this actor telemetry id, exact match (empty: no filter). It narrows results inside the caller's organization; it is no permission.",
});

/**
 * `team` (docs/api.md §4.2.1) as a query schema names it: every value is read by
 * {@link teamParam}, this only documents the parameter.
 */
export const teamQueryParam = z.string().optional().meta({
  description:
    "A set of actor telemetry ids: repeated (`team=a&team=b`), comma-separated (`team=a,b`) or both; duplicates and blank entries are ignored, only blanks is no filter. With `actor`, both apply.",
  type: "array",
  items: { type: "string" },
});

/** `team`: repeated and/or comma-separated actor ids; blanks and duplicates dropped. */
export function teamParam(search: URLSearchParams): string[] | undefined {
  const ids = new Set<string>();
  for (const value of search.getAll("team")) {
    for (const part of value.split(",")) {
      const id = part.trim();
      if (id !== "") ids.add(id);
    }
  }
  return ids.size === 0 ? undefined : [...ids].sort();
}

/** The first value of each parameter, for schemas over single values. */
export function firstValues(search: URLSearchParams): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, value] of search) if (!(key in values)) values[key] = value;
  return values;
}

/** Parses with a schema; the first issue's message becomes the 400. */
export function parseParams<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) {
    throw invalidRequest(result.error.issues[0]?.message ?? "invalid query parameters");
  }
  return result.data;
}

/** A request's query string parsed with `schema` (the first value of each parameter). */
export function parseQuery<S extends z.ZodType>(schema: S, url: URL): z.output<S> {
  return parseParams(schema, firstValues(url.searchParams));
}

/** `limit` and `cursor`: the parameters of a keyset page (docs/api.md §2.10). */
export const pageParams = { limit: limitParam, cursor: cursorParam };

/** `actor` and `team`: the actor filters of the lists, exports and insights that take them. */
export const actorFilterParams = { actor: actorParam, team: teamQueryParam };

/** The actor filters of a request: `actor` as parsed, `team` from all its values (`teamParam`). */
export function actorFiltersOf(
  query: { actor?: string },
  url: URL,
): { actor?: string; team?: string[] } {
  return { actor: query.actor, team: teamParam(url.searchParams) };
}

/** The prefix of a dimension filter's parameter: `dim.<key>=<value>` (docs/api.md §4.22). */
export const DIM_PREFIX = "dim.";

/**
 * Every `dim.<key>=<value>` parameter (repeatable, AND), as sorted
 * `[key, value]` pairs; empty values are no filter, duplicates count once.
 * A key that could not be a dimension (`--dimension`'s rule) or a value over
 * the stored length is 400: it could match nothing.
 */
export function dimParams(search: URLSearchParams): [string, string][] | undefined {
  const pairs = new Map<string, [string, string]>();
  for (const [name, value] of search) {
    if (!name.startsWith(DIM_PREFIX)) continue;
    const key = name.slice(DIM_PREFIX.length);
    if (!DIMENSION_KEY_PATTERN.test(key)) {
      throw invalidRequest(
        `invalid dimension key: ${
          JSON.stringify(key)
        } (1 to 64 letters, digits, ".", "_" or "-", as dim.<key>=<value>)`,
      );
    }
    if (value.length > DIMENSION_LIMITS.valueChars) {
      throw invalidRequest(
        `invalid dimension value for ${
          JSON.stringify(key)
        }: longer than ${DIMENSION_LIMITS.valueChars} characters`,
      );
    }
    if (value !== "") pairs.set(`${key}\u0000${value}`, [key, value]);
  }
  if (pairs.size === 0) return undefined;
  return [...pairs.values()].sort(([a, x], [b, y]) =>
    a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0
  );
}

/** `dim.<key>` as a query schema documents it; every value is read by {@link dimParams}. */
export const dimQueryParam = z.string().optional().meta({
  description:
    "**Extension.** `dim.<key>=<value>`: only sessions whose dimension `<key>` (a resource attribute named by `--dimension`) has this value; repeatable, all apply. A bad key or a value over 256 characters is 400.",
});

/** `repository` (docs/api.md §4.22): the `repository` dimension, exact match. */
export const repositoryParam = exactParam.meta({
  description:
    "**Extension.** Only sessions that worked in this repository (`dim.repository`), exact match (empty: no filter).",
});

/**
 * The `dim.<key>=<value>` filters of a request, with `repository` as
 * `dim.repository`: `{dims}`, or `{}` without any, so that a cursor's binding
 * (`cursor.ts`) stays what it was for requests without them.
 */
export function dimFilters(
  search: URLSearchParams,
  repository: string | undefined,
): { dims?: [string, string][] } {
  const params = new URLSearchParams(search);
  if (repository !== undefined) params.append(`${DIM_PREFIX}repository`, repository);
  const dims = dimParams(params);
  return dims === undefined ? {} : { dims };
}

/** `repository` and `dim.<key>`: the dimension filters, read together by {@link dimFilters}. */
export const dimFilterParams = { repository: repositoryParam, "dim.<key>": dimQueryParam };

/**
 * The filters of a list or export: its own (`own`) between the actor filters
 * and the dimension filters that every one of them takes, in that order (the
 * order the API document lists them in). {@link listFiltersOf} reads the two
 * shared groups.
 */
export function listFilterParams<const T extends Record<string, z.ZodType>>(own: T) {
  return { ...actorFilterParams, ...own, ...dimFilterParams };
}

/** The actor and dimension filters of a request whose query took {@link listFilterParams}. */
export function listFiltersOf(
  query: { actor?: string; repository?: string },
  url: URL,
): { actor?: string; team?: string[]; dims?: [string, string][] } {
  return { ...actorFiltersOf(query, url), ...dimFilters(url.searchParams, query.repository) };
}
