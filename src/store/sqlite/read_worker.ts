/**
 * A reader thread: runs batches of read statements on its own read-only
 * connection to `telemetry.db`, each batch in one read transaction so that
 * its statements see one snapshot. Runs off the main thread so a slow query
 * never stalls the event loop, and can be stopped at the query time limit.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import type { SQLInputValue, StatementSync } from "node:sqlite";
import { openDatabase } from "./database.ts";
import { MEMORY_BUDGET } from "../../memory_budget.ts";
import type { ReadStatement } from "../telemetry_queries.ts";

/** Message to a reader thread. */
export interface ReadRequest {
  id: number;
  path: string;
  statements: ReadStatement[];
}

/** A reader thread's answer to one batch. */
export type ReadResponse =
  | { id: number; results: unknown[][]; error?: undefined }
  | { id: number; error: string; results?: undefined };

/** Message from a reader thread: a batch's answer, or `ready` once, when it has started. */
export type ReaderMessage = ReadResponse | { ready: true };

let db: ReturnType<typeof openDatabase> | null = null;
const statements = new Map<string, StatementSync>();

function prepared(sql: string): StatementSync {
  let statement = statements.get(sql);
  if (!statement) {
    statement = db!.prepare(sql);
    statements.set(sql, statement);
  }
  return statement;
}

self.onmessage = (message: MessageEvent<ReadRequest>) => {
  const request = message.data;
  let response: ReadResponse;
  try {
    db ??= openDatabase(request.path, { readOnly: true, cacheMiB: MEMORY_BUDGET.readerCacheMiB });
    db.exec("BEGIN");
    try {
      const results = request.statements.map(({ sql, params }) =>
        prepared(sql).all(...(params as SQLInputValue[]))
      );
      response = { id: request.id, results };
    } finally {
      db.exec("COMMIT");
    }
  } catch (error) {
    response = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  self.postMessage(response);
};

const ready: ReaderMessage = { ready: true };
self.postMessage(ready);
