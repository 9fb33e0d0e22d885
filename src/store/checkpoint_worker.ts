/**
 * The WAL checkpointer thread: copies committed pages from `telemetry.db-wal`
 * into the database file on its own connection, so that the writer's COMMIT
 * never pays for a checkpoint on the event loop. PASSIVE checkpoints never
 * block the writer or readers.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { openDatabase } from "./sqlite.ts";

let db: ReturnType<typeof openDatabase> | null = null;

self.onmessage = (message: MessageEvent<{ path: string }>) => {
  try {
    db ??= openDatabase(message.data.path, { cacheMiB: 1 });
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
    self.postMessage({ ok: true });
  } catch (error) {
    self.postMessage({ ok: false, error: error instanceof Error ? error.message : String(error) });
  }
};
