/**
 * The checkpoint thread: copies the WAL's committed pages into
 * `telemetry.db` on its own connection while the writer thread goes on
 * writing (a passive checkpoint never blocks a writer), so that the writer's
 * own checkpoint, which lets the WAL start over, finds little left to copy and
 * sync. Started by the writer thread, woken after each of its commits.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { openDatabase } from "./database.ts";

/** Messages to the checkpoint thread. */
export type CheckpointRequest = { op: "open"; path: string } | { op: "commit" } | {
  op: "close";
};

/**
 * Least milliseconds between two checkpoints: pages rewritten by several
 * commits in that time are copied once.
 */
const MIN_INTERVAL_MS = 50;

let db: ReturnType<typeof openDatabase> | null = null;
let wanted = false;
let scheduled = false;
let last = 0;

function checkpoint(): void {
  scheduled = false;
  if (!wanted || db === null) return;
  wanted = false;
  last = performance.now();
  try {
    db.exec("PRAGMA wal_checkpoint(PASSIVE)");
  } catch {
    // Busy or failing: the writer's own checkpoint does the work instead.
  }
}

self.onmessage = (message: MessageEvent<CheckpointRequest>) => {
  const request = message.data;
  switch (request.op) {
    case "open":
      try {
        db = openDatabase(request.path, { cacheMiB: 1 });
      } catch {
        // Not opened: the writer's own checkpoints do the work.
      }
      break;
    case "commit":
      wanted = true;
      if (!scheduled) {
        scheduled = true;
        setTimeout(checkpoint, Math.max(0, last + MIN_INTERVAL_MS - performance.now()));
      }
      break;
    case "close":
      db?.close();
      db = null;
      self.postMessage("closed");
      self.close();
      break;
  }
};
