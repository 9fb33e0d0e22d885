/**
 * The pagination envelope (docs/api.md §2.10) over keyset pages fetched with one extra row.
 *
 * @module
 */
import { jsonResponse } from "../http/responses.ts";
import type { ReadStatement } from "../store/telemetry_queries.ts";
import { actorIdsOf } from "./actor_names.ts";
import type { ApiContext } from "./context.ts";
import { type CursorBinding, cursorBinding, type CursorKey } from "./cursor.ts";
import type { ActorNameMap } from "./shapes.ts";

type Row = Record<string, unknown>;

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

/** A keyset list request: its endpoint and filters (the cursor's scope), cursor and limit. */
export interface ListRequest {
  endpoint: string;
  filters: object;
  cursor: string | undefined;
  limit: number;
}

/**
 * The answer to a keyset list request: the page `read` selects after the
 * cursor's key (`limit + 1` rows), each row an object with its actor's name.
 */
export async function listPage(
  { orgId, services }: ApiContext,
  request: ListRequest,
  read: (after: CursorKey | null) => ReadStatement,
  keyOf: (row: Row) => CursorKey,
  toObject: (row: Row, names: ActorNameMap) => unknown,
): Promise<Response> {
  const cursors = cursorBinding(services.cursorSecret, orgId, request.endpoint, request.filters);
  const after = request.cursor === undefined ? null : cursors.decode(request.cursor);
  const [rows = []] = await services.reader.read([read(after)]) as Row[][];
  const names = await services.actorNames.resolve(orgId, actorIdsOf(rows));
  return jsonResponse(
    pageEnvelope(rows, request.limit, cursors, keyOf, (row) => toObject(row, names)),
  );
}
