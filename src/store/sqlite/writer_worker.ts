/**
 * The writer thread: owns the write connection to `telemetry.db` and runs the
 * ingest transactions and retention there, so that SQLite's work overlaps
 * with decoding the next requests on the main thread. Requests are handled
 * one at a time, in the order they were sent. A checkpoint thread of its own
 * (`checkpoint_worker.ts`) copies the WAL into the file beside it.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import type { MetricSample } from "../../model/metrics.ts";
import type { UnmappedRecords } from "../../model/unmapped.ts";
import type { TelemetryEvent } from "../../model/telemetry.ts";
import type { SessionDimension } from "../../model/dimensions.ts";
import { Retention } from "./retention.ts";
import { openDatabase } from "./database.ts";
import { MEMORY_BUDGET } from "../../memory_budget.ts";
import type { IngestSummary, RetentionOptions, Sender } from "../stores.ts";
import type { CheckpointRequest } from "./checkpoint_worker.ts";
import { type PreparedEvents, TelemetryWriter } from "./telemetry_writer.ts";

/** What the thread opens the store with, besides its path. */
export interface WriterOpenOptions {
  redactSecrets: boolean;
  retention: RetentionOptions;
}

/** Messages to the writer thread. */
export type WriterRequest =
  | { id: number; op: "open"; path: string } & WriterOpenOptions
  | {
    id: number;
    op: "ingest";
    sender: Sender;
    events: TelemetryEvent[];
    points: readonly MetricSample[];
    unmapped: readonly UnmappedRecords[];
    dimensions: readonly SessionDimension[];
    prepared: PreparedEvents;
  }
  | { id: number; op: "probe"; write?: false }
  | { id: number; op: "probe"; write: true; path: string }
  | { id: number; op: "retention"; now: number }
  | { id: number; op: "close" };

/** Answers from the writer thread; errors keep SQLite's code and message. */
export type WriterResponse =
  | { id: number; ok: true; value: unknown; seq: number }
  | { id: number; ok: false; message: string; errcode?: number };

let db: ReturnType<typeof openDatabase> | null = null;
let writer: TelemetryWriter | null = null;
let retention: Retention | null = null;
/** The retention pass in progress, if any: a later one and closing wait for it. */
let retentionPass: Promise<void> | null = null;
let checkpointer: Worker | null = null;

/** Starts the checkpoint thread (`checkpoint_worker.ts`) on `path`. */
function startCheckpointer(path: string): void {
  checkpointer = new Worker(new URL("./checkpoint_worker.ts", import.meta.url), {
    type: "module",
  });
  // A checkpoint thread that fails is dropped: the writer's own checkpoints do the work.
  checkpointer.onerror = (event) => {
    event.preventDefault();
    checkpointer?.terminate();
    checkpointer = null;
  };
  checkpointer.postMessage({ op: "open", path } satisfies CheckpointRequest);
}

/** Stops the checkpoint thread once its connection is closed. */
async function stopCheckpointer(): Promise<void> {
  const worker = checkpointer;
  if (worker === null) return;
  checkpointer = null;
  await new Promise<void>((resolve) => {
    worker.onmessage = () => resolve();
    worker.onerror = (event) => {
      event.preventDefault();
      resolve();
    };
    worker.postMessage({ op: "close" } satisfies CheckpointRequest);
  });
  worker.terminate();
}

/** Wakes the checkpoint thread: a commit added pages to the WAL. */
function committed(): void {
  checkpointer?.postMessage({ op: "commit" } satisfies CheckpointRequest);
}

async function handle(request: WriterRequest): Promise<unknown> {
  switch (request.op) {
    case "open":
      db = openDatabase(request.path, { cacheMiB: MEMORY_BUDGET.writerCacheMiB });
      // Checkpoint after a COMMIT once the WAL holds 16 MiB: this thread is not
      // the event loop, and only the writer's own checkpoint, run before its
      // next transaction, lets the WAL start over instead of growing. The
      // checkpoint thread copies most pages before (the writer stalled ~30% of
      // its time on checkpoints' copies and syncs).
      db.exec("PRAGMA wal_autocheckpoint = 4096");
      writer = new TelemetryWriter(db, { redactSecrets: request.redactSecrets });
      retention = new Retention(db, request.path, request.retention);
      startCheckpointer(request.path);
      return null;
    case "ingest": {
      const summary = writer!.ingest(
        request.sender,
        request.events,
        request.points,
        request.prepared,
        request.unmapped,
        request.dimensions,
      );
      committed();
      return summary;
    }
    case "probe":
      if (request.write) {
        probeFreeSpace(request.path);
        return writer!.probeWrite();
      }
      return writer!.probe();
    case "retention":
      throw new Error("A retention pass runs beside the queue");
    case "close":
      await retentionPass;
      await stopCheckpointer();
      if (db?.isOpen) {
        try {
          db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        } catch {
          // A reader still holds the WAL: the next start checkpoints it.
        }
        db.close();
      }
      return null;
  }
}

/**
 * Room the disk must have before readiness returns after a full disk: SQLite
 * reuses the WAL space a failed transaction took, so a one-page write alone
 * would say "ready" while the next export fails again.
 */
const FREE_SPACE_PROBE_BYTES = 4 * 1024 * 1024;

/**
 * Writes and removes a scratch file of {@link FREE_SPACE_PROBE_BYTES} beside
 * `telemetry.db`; fails with SQLite's code for a full disk (13) or a
 * read-only one (8), so that the main thread classifies it as SQLite's own.
 */
function probeFreeSpace(databasePath: string): void {
  const scratch = `${databasePath}.space-probe`;
  try {
    Deno.writeFileSync(scratch, new Uint8Array(FREE_SPACE_PROBE_BYTES), { mode: 0o600 });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const full = /os error 28\b|no space/i.test(message);
    throw Object.assign(new Error(`Free space probe failed: ${message}`), {
      errcode: full ? 13 : 8,
    });
  } finally {
    try {
      Deno.removeSync(scratch);
    } catch {
      // Never created, or already gone.
    }
  }
}

/**
 * Most export requests written in one transaction: they share one commit
 * (the index pages they touch are written once), and the first of them waits
 * for the others' work before it is answered.
 */
const GROUP_MAX_REQUESTS = 8;
const GROUP_MAX_EVENTS = 8192;

/** Requests received and not yet handled, in the order they were sent. */
const waiting: WriterRequest[] = [];
let draining = false;

/**
 * Handles the waiting requests in order. Export requests that wait together
 * are written in one transaction ({@link TelemetryWriter.ingestGroup}); each is
 * answered after the commit, with its own outcome.
 */
async function drain(): Promise<void> {
  while (waiting.length > 0) {
    const group = ingestGroup();
    if (group.length > 1) {
      let answers: (IngestSummary | Error)[];
      let seq = 0;
      try {
        answers = writer!.ingestGroup(group);
        committed();
        seq = writer!.currentSeq();
      } catch (error) {
        answers = group.map(() => error instanceof Error ? error : new Error(String(error)));
      }
      group.forEach((request, i) => {
        const answer = answers[i]!;
        if (answer instanceof Error) answerError(request.id, answer);
        else send({ id: request.id, ok: true, value: answer, seq });
      });
      continue;
    }
    const request = group[0] ?? waiting.shift()!;
    if (request.op === "retention") {
      // A pass runs beside the queue: between its short transactions the
      // exports that wait are written (docs/design.md §4.4).
      retentionPass = runRetention(request);
      continue;
    }
    try {
      const value = await handle(request);
      send({ id: request.id, ok: true, value, seq: writer?.currentSeq() ?? 0 });
    } catch (error) {
      answerError(request.id, error);
    }
  }
  draining = false;
}

/** Runs one retention pass and answers it; the queue keeps draining meanwhile. */
async function runRetention(request: Extract<WriterRequest, { op: "retention" }>): Promise<void> {
  await retentionPass;
  try {
    const value = await retention!.run(request.now);
    send({ id: request.id, ok: true, value, seq: writer?.currentSeq() ?? 0 });
  } catch (error) {
    answerError(request.id, error);
  }
}

/** The export requests at the head of the queue that one transaction takes (none: not an export). */
function ingestGroup(): Extract<WriterRequest, { op: "ingest" }>[] {
  const group: Extract<WriterRequest, { op: "ingest" }>[] = [];
  let events = 0;
  while (group.length < GROUP_MAX_REQUESTS && writer !== null) {
    const next = waiting[0];
    if (next?.op !== "ingest") break;
    if (group.length > 0 && events + next.events.length + next.points.length > GROUP_MAX_EVENTS) {
      break;
    }
    events += next.events.length + next.points.length;
    group.push(next);
    waiting.shift();
  }
  return group;
}

function answerError(id: number, error: unknown): void {
  send({
    id,
    ok: false,
    message: error instanceof Error ? error.message : String(error),
    ...(typeof (error as { errcode?: unknown })?.errcode === "number"
      ? { errcode: (error as { errcode: number }).errcode }
      : {}),
  });
}

function send(response: WriterResponse): void {
  try {
    self.postMessage(response);
  } catch (error) {
    self.postMessage({ id: response.id, ok: false, message: `Unsendable answer: ${error}` });
  }
}

self.onmessage = (message: MessageEvent<WriterRequest>) => {
  waiting.push(message.data);
  if (draining) return;
  draining = true;
  // A turn of the event loop first, so that requests already sent arrive and join one group.
  setTimeout(drain, 0);
};
