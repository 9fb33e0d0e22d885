/**
 * Query-parameter schemas shared by the endpoints (zod), with messages that
 * name the problem as docs/api.md §7 shapes them.
 *
 * @module
 */
import { z } from "zod";
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
  });
}

/** An exact-match filter; an empty value means no filter. */
export const exactParam = z.string().optional().transform((raw) => raw === "" ? undefined : raw);

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
