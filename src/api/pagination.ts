/**
 * The pagination envelope (docs/api.md §2.10) over keyset pages fetched with one extra row.
 *
 * @module
 */
import type { CursorBinding, CursorKey } from "./cursor.ts";

/** `{data, next_cursor?}` from `limit + 1` rows; the cursor is bound to the request's organization and filters. */
export function pageEnvelope<R>(
  rows: R[],
  limit: number,
  cursors: CursorBinding,
  keyOf: (row: R) => CursorKey,
  toObject: (row: R) => unknown,
): { data: unknown[]; next_cursor?: string } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  if (rows.length <= limit || last === undefined) return { data: page.map(toObject) };
  return { data: page.map(toObject), next_cursor: cursors.encode(keyOf(last)) };
}
