/**
 * The pagination envelope (docs/api.md §2.10) over keyset pages fetched with one extra row.
 *
 * @module
 */
import { z } from "zod";
import { jsonResponse } from "../http/responses.ts";
import type { PageStatement, TelemetryQueries } from "../store/telemetry_queries.ts";
import { actorIdsOf } from "./actor_names.ts";
import type { ApiContext } from "./context.ts";
import { type CursorBinding, cursorBinding, type CursorKey } from "./cursor.ts";
import { pageParams } from "./params.ts";
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

/** The query of a keyset list: `limit`, `cursor` and its `filters`' parameters. */
export function listQuery<S extends z.ZodRawShape>(filters: S) {
  return z.object({ ...pageParams, ...filters });
}

/** A keyset list: its endpoint (the cursors' scope), its page statement, its rows' keys and objects. */
export interface KeysetList<F, E = undefined> {
  endpoint: string;
  page(queries: TelemetryQueries): PageStatement<F>;
  keyOf(row: Row): CursorKey;
  /** What the page's objects need beyond their own row and names, from the page's rows. */
  extra?(rows: Row[]): E;
  toObject(row: Row, names: ActorNameMap, extra: E): unknown;
}

/**
 * The answer to a request of `list` under `filters`: the page after the
 * cursor's key (`limit + 1` rows read), each row an object with its actor's name.
 */
export async function listPage<F extends object, E = undefined>(
  context: ApiContext,
  list: KeysetList<F, E>,
  { cursor, limit }: { cursor?: string; limit: number },
  filters: F,
): Promise<Response> {
  const { orgId, services } = context;
  const cursors = cursorBinding(services.cursorSecret, orgId, list.endpoint, filters);
  const after = cursor === undefined ? null : cursors.decode(cursor);
  const page = list.page(services.reader.queries)(orgId, filters, after, limit);
  const [rows = []] = await services.reader.read([page]) as Row[][];
  const names = await services.actorNames.resolve(orgId, actorIdsOf(rows));
  const extra = list.extra?.(rows.slice(0, limit)) as E;
  return jsonResponse(
    pageEnvelope(rows, limit, cursors, list.keyOf, (row) => list.toObject(row, names, extra)),
  );
}
