/**
 * Opaque keyset cursors: base64url JSON of the last row's sort key and a
 * fingerprint of the filters it was issued for (not the page size, which a
 * client may change between pages).
 *
 * @module
 */
import { createHash } from "node:crypto";
import { invalidRequest } from "../http/responses.ts";

/** A sort key: e.g. `[last_seen_ms, session_id]` or `[ts_ms, id]`. */
export type CursorKey = [number, string];

/** A stable fingerprint of a filter set. */
export function filterFingerprint(endpoint: string, filters: Record<string, unknown>): string {
  const canonical = JSON.stringify([endpoint, Object.entries(filters).sort()]);
  return createHash("sha256").update(canonical).digest("base64url").slice(0, 16);
}

/** The cursor that resumes after `key` under the same filters. */
export function encodeCursor(fingerprint: string, key: CursorKey): string {
  return btoa(JSON.stringify({ f: fingerprint, k: key }))
    .replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

/** The sort key a cursor resumes after; 400 when it does not decode or fits other filters. */
export function decodeCursor(cursor: string, fingerprint: string): CursorKey {
  let decoded: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error("not base64url");
    decoded = JSON.parse(atob(cursor.replaceAll("-", "+").replaceAll("_", "/")));
  } catch {
    throw invalidRequest("invalid cursor: it does not decode; send next_cursor unchanged");
  }
  const value = decoded as { f?: unknown; k?: unknown };
  const key = value?.k;
  if (
    typeof value !== "object" || value === null || !Array.isArray(key) || key.length !== 2 ||
    !Number.isSafeInteger(key[0]) || typeof key[1] !== "string" || typeof value.f !== "string"
  ) {
    throw invalidRequest("invalid cursor: it does not decode; send next_cursor unchanged");
  }
  if (value.f !== fingerprint) {
    throw invalidRequest("invalid cursor: it was issued for other filters; send the same filters");
  }
  return [key[0], key[1]];
}
