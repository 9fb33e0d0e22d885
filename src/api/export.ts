/**
 * `/v1/export/tool-calls` and `/v1/export/sessions` (docs/api.md §4.20, §4.21; an
 * extension): an organization's tool calls, or whole sessions, of a window as
 * NDJSON, oldest first. They are read from the store in keyset pages as the
 * client takes them (the stream's backpressure), so an export of any size
 * holds about two pages in memory, and a client that goes away stops the
 * reads. A line's own `(timestamp, id)` — a session's `(last_seen,
 * session_id)` — is its place in the order: `after` set to it and
 * `after_id` to its id resume the export after that line. The CLI's `export`
 * reads the same pages (`exportPages`).
 *
 * @module
 */
import { z } from "zod";
import { QueryQueueFullError, ServerStoppingError } from "../errors.ts";
import { invalidRequest, NDJSON_TYPE } from "../http/responses.ts";
import type { TelemetryReader } from "../store/stores.ts";
import type {
  CallFilters,
  PageKey,
  PageStatement,
  ReadStatement,
  SessionFilters,
  TelemetryQueries,
} from "../store/telemetry_queries.ts";
import type { ActorNames } from "./actor_names.ts";
import type { ApiHandler, ApiRoute } from "./context.ts";
import type { KeysetList } from "./pagination.ts";
import { exactParam, listFilterParams, parseQuery, timeParam } from "./params.ts";
import { ExportedSession, ExportedToolCall } from "./schemas.ts";
import { type ActorNameMap, type DimensionMap, sessionObject, toolCallObject } from "./shapes.ts";
import { rowDimensions } from "./dimensions.ts";
import { actorIdsOf } from "./actor_names.ts";
import { SESSION_LIST, sessionFiltersOf } from "./sessions.ts";
import { type SessionCostMap, sessionCostsOf } from "./session_costs.ts";
import { parseToolCallQuery, TOOL_CALL_LIST, toolCallFilterQuery } from "./tool_calls.ts";

type Row = Record<string, unknown>;

/** Rows read per page. */
export const EXPORT_PAGE_ROWS = 1000;

/** How long a page waits for a reader when too many queries are waiting, at most (1 s each). */
const OVERLOADED_RETRIES = 30;

/** One kind of export: what a page reads, where a row sits in the order, what a line holds. */
export interface ExportKind<F> {
  /** `tool-calls` or `sessions`: the route's last segment and the CLI's `--what`. */
  name: string;
  /** The schema of one line (`schemas.ts`). */
  line: z.ZodObject;
  /** The page of at most `limit` rows after `after` (from the start when null). */
  page(queries: TelemetryQueries): PageStatement<F>;
  /** A row's place in the order, which the next page starts after. */
  keyOf(row: Row): PageKey;
  /** Whether its lines carry sessions' costs (from the rows: `session_costs.ts`). */
  sessionCosts: boolean;
  /** A row as its line. */
  toLine(row: Row, names: ActorNameMap, costs: SessionCostMap, dims: DimensionMap): Row;
}

/**
 * An export's name and order are its list's (`/v1/<name>`): the same rows by
 * the same key, read oldest first.
 */
function listedAs(
  list: Pick<KeysetList<unknown, unknown>, "endpoint" | "keyOf">,
): Pick<ExportKind<unknown>, "name" | "keyOf"> {
  return { name: list.endpoint, keyOf: list.keyOf };
}

/** A JSON array the store aggregated (text), as values. */
function jsonList(value: unknown): unknown[] {
  return typeof value === "string" ? JSON.parse(value) : [];
}

/** Tool calls by `(ts, id)`, each with its risk flags and external domains. */
export const TOOL_CALL_EXPORT: ExportKind<CallFilters> = {
  ...listedAs(TOOL_CALL_LIST),
  line: ExportedToolCall,
  page: (queries) => queries.exportToolCallsPage,
  sessionCosts: false,
  toLine: (row, names, _costs, dims) => ({
    ...toolCallObject(row, names, dims),
    risk_flags: jsonList(row.risk_flags),
    external_domains: jsonList(row.external_domains),
  }),
};

/** Whole sessions by `(last_seen, session_id)`. */
export const SESSION_EXPORT: ExportKind<SessionFilters> = {
  ...listedAs(SESSION_LIST),
  line: ExportedSession,
  page: (queries) => queries.exportSessionsPage,
  sessionCosts: true,
  toLine: (row, names, costs, dims) => sessionObject(row, names, costs, dims),
};

/** What an export reads: the store and the actors' names. */
export interface ExportSource {
  reader: TelemetryReader;
  actorNames: Pick<ActorNames, "resolve">;
}

/**
 * The lines of an export in pages, oldest first, after `after` (from the
 * start when null). Each page is read when the consumer asks for it; a page
 * refused because too many queries wait is retried each second for a while
 * (the first is not: its refusal is the request's answer).
 */
export async function* exportPages<F>(
  source: ExportSource,
  kind: ExportKind<F>,
  orgId: string,
  filters: F,
  after: PageKey | null,
  pageRows = EXPORT_PAGE_ROWS,
): AsyncGenerator<Row[], void, undefined> {
  let position = after;
  for (let first = true;; first = false) {
    const statement = kind.page(source.reader.queries)(orgId, filters, position, pageRows);
    const rows = await readPage(source.reader, statement, first ? 0 : OVERLOADED_RETRIES);
    if (rows.length === 0) return;
    const names = await source.actorNames.resolve(orgId, actorIdsOf(rows));
    const costs = kind.sessionCosts ? sessionCostsOf(rows) : new Map();
    const dims = rowDimensions(rows);
    yield rows.map((row) => kind.toLine(row, names, costs, dims));
    if (rows.length < pageRows) return;
    position = kind.keyOf(rows.at(-1)!);
  }
}

async function readPage(
  reader: TelemetryReader,
  statement: ReadStatement,
  retries: number,
): Promise<Row[]> {
  for (let attempt = 0;; attempt++) {
    try {
      const [rows] = await reader.read([statement]);
      return rows as Row[];
    } catch (error) {
      if (!(error instanceof QueryQueueFullError) || attempt >= retries) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/**
 * An NDJSON response over `pages`: the first page is read before answering,
 * so that its errors are answered as the spec's; the others as the client
 * takes the stream. A client that goes away ends the pages (a read in
 * progress finishes, no other starts). An error after the first page cuts
 * the stream (the listener logs it), as does the server stopping: the client
 * sees a body that did not end (HTTP/1.1 chunked without its last chunk).
 */
async function ndjsonResponse(
  pages: AsyncGenerator<Row[], void, undefined>,
  stopping: AbortSignal | undefined,
): Promise<Response> {
  let next: IteratorResult<Row[], void> | null = await pages.next();
  let ended = false;
  const end = () => {
    ended = true;
    stopping?.removeEventListener("abort", stop);
    return pages.return();
  };
  let stream!: ReadableStreamDefaultController<Uint8Array>;
  const stop = () => {
    if (ended) return;
    void end();
    stream.error(new ServerStoppingError("Export cut: the server is stopping"));
  };
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      stream = controller;
      stopping?.addEventListener("abort", stop, { once: true });
    },
    async pull(controller) {
      try {
        const page = next ?? await pages.next();
        next = null;
        if (ended) return;
        if (page.done) {
          void end();
          controller.close();
        } else {
          controller.enqueue(encoder.encode(ndjsonLines(page.value)));
        }
      } catch (error) {
        if (ended) return;
        void end();
        // The listener's error handler logs it.
        controller.error(error);
      }
    },
    async cancel() {
      await end();
    },
  });
  return new Response(body, { headers: { "content-type": NDJSON_TYPE } });
}

/** Values as NDJSON: one JSON text and a newline each. */
export function ndjsonLines(values: readonly unknown[]): string {
  let text = "";
  for (const value of values) text += JSON.stringify(value) + "\n";
  return text;
}

/** `after_id`: where to resume, with `after` set to the same line's time. */
function afterIdParam(line: string, id: string) {
  return exactParam.meta({
    description:
      `Resume after a line: its \`${id}\`, sent with \`after\` set to its \`${line}\` (and the other parameters unchanged); the export goes on with the lines after it in (\`${line}\`, \`${id}\`) order, each once. Without \`after\` it is 400 \`invalid_request\`.`,
  });
}

/** The place to resume after: `(after, after_id)`, or null to start at `after`. */
function resumeKey(after: number | undefined, afterId: string | undefined): PageKey | null {
  if (afterId === undefined) return null;
  if (after === undefined) {
    throw invalidRequest(
      "invalid after_id: send it with after, the time of the line it names (resume after that line)",
    );
  }
  return [after, afterId];
}

const exportToolCallsQuery = toolCallFilterQuery.extend({
  after_id: afterIdParam("timestamp", "id"),
});

const exportToolCalls: ApiHandler = async ({ url, orgId, services }) => {
  const { query, filters } = parseToolCallQuery(url, exportToolCallsQuery);
  const after = resumeKey(query.after, query.after_id);
  return await ndjsonResponse(
    exportPages(services, TOOL_CALL_EXPORT, orgId, filters, after),
    services.stopping,
  );
};

/** The sessions export's time bound: a session's `last_seen`, inclusive. */
function lastSeenParam(name: "after" | "before") {
  return timeParam(name).meta({
    description: `Only sessions whose \`last_seen\` (its latest tool call) is ${
      name === "after" ? "at or after" : "at or before"
    } this instant (inclusive): RFC 3339 with a time zone, \`Z\` or an offset (send \`+\` as \`%2B\`).`,
  });
}

const exportSessionsQuery = z.object({
  after: lastSeenParam("after"),
  before: lastSeenParam("before"),
  agent: exactParam.meta({
    description: "Only sessions with a tool call whose `agent_system` is this (empty: no filter).",
  }),
  ...listFilterParams({
    domain: exactParam.meta({
      description:
        "Only sessions that reached this external domain, exact match (empty: no filter).",
    }),
  }),
  after_id: afterIdParam("last_seen", "session_id"),
});

const exportSessions: ApiHandler = async ({ url, orgId, services }) => {
  const query = parseQuery(exportSessionsQuery, url);
  const filters = sessionFiltersOf(query, url);
  const after = resumeKey(query.after, query.after_id);
  return await ndjsonResponse(
    exportPages(services, SESSION_EXPORT, orgId, filters, after),
    services.stopping,
  );
};

/** Routes of this module. */
export const exportRoutes: ApiRoute[] = [
  {
    pattern: "/v1/export/tool-calls",
    handler: exportToolCalls,
    tag: "export",
    summary: "Every tool call of a window as NDJSON, oldest first, with its flags and domains",
    description:
      "Extension. The filters of `/v1/tool-calls`, with the same values and errors; no `limit` or `cursor`: every matching call, one per line, oldest first by (`timestamp`, `id`), read from the store as the client reads the stream. Errors in the parameters are answered before the stream starts (400, in the spec's shape); a stream cut short (an error on the server, a restart) ends without its last chunk, and the export resumes after the last whole line with `after` set to its `timestamp` and `after_id` to its `id`. A call stored after the export has passed its time is not in it: export windows that ended a few minutes ago.",
    query: exportToolCallsQuery,
    response: ExportedToolCall,
    body: "ndjson",
    errors: ["invalid_request", "overloaded"],
  },
  {
    pattern: "/v1/export/sessions",
    handler: exportSessions,
    tag: "export",
    summary: "Every session of a window as NDJSON, by `last_seen`, oldest first",
    description:
      "Extension. Whole sessions (every figure covers all of the session's calls), selected by `last_seen` within `after` and `before`, and by a call of the `actor`, `team` or `agent` and the `domain` reached; one per line, oldest `last_seen` first (ties by `session_id`), read from the store as the client reads the stream. Resume after the last whole line with `after` set to its `last_seen` and `after_id` to its `session_id`. A session that gets calls while it is exported moves to its new `last_seen`, so it may appear again later in the same stream, with its new figures (the last line of a session wins).",
    query: exportSessionsQuery,
    response: ExportedSession,
    body: "ndjson",
    errors: ["invalid_request", "overloaded"],
  },
];
