/**
 * The main thread's side of the writer thread (`writer_worker.ts`): the
 * ingest write path, its readiness probe and retention, as promises.
 *
 * @module
 */
import { NamedError } from "../../errors.ts";
import type { MetricSample } from "../../model/metrics.ts";
import type { UnmappedRecords } from "../../model/unmapped.ts";
import type { TelemetryEvent } from "../../model/telemetry.ts";
import type { SessionDimension } from "../../model/dimensions.ts";
import { log } from "../../log.ts";
import { sqliteUnavailable } from "./database.ts";
import { WriteOutage } from "../write_outage.ts";
import { exportFindings } from "../call_detection.ts";
import { eventRowIds } from "../row_ids.ts";
import type { IngestSummary, RetentionResult, Sender, TelemetryWriterApi } from "../stores.ts";
import type { PreparedEvents } from "./telemetry_writer.ts";
import type { WriterOpenOptions, WriterRequest, WriterResponse } from "./writer_worker.ts";

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/** Distributes `Omit` over a union of request shapes. */
type Body<R> = R extends unknown ? Omit<R, "id"> : never;

/** A failure inside the writer thread, with SQLite's error code when it had one. */
export class WriterError extends NamedError {
  constructor(message: string, readonly errcode?: number) {
    super(message);
  }
}

/** The telemetry write path, run on its own thread. */
export class WriterThread implements TelemetryWriterApi {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  readonly #outage = new WriteOutage();
  #path = "";
  #redactSecrets = true;
  #nextId = 1;
  #lastSeq = 0;
  #closed: Promise<void> | null = null;
  /** Set once the thread died: every later call fails at once instead of waiting forever. */
  #failure: string | null = null;

  private constructor() {
    this.#worker = new Worker(new URL("./writer_worker.ts", import.meta.url), { type: "module" });
    this.#worker.onmessage = (message: MessageEvent<WriterResponse>) => this.#settle(message.data);
    this.#worker.onerror = (event) => {
      event.preventDefault();
      this.#failure = `Writer thread stopped: ${event.message}`;
      log("error", "writer thread stopped", { error: event.message });
      for (const pending of this.#pending.values()) pending.reject(new WriterError(this.#failure));
      this.#pending.clear();
    };
  }

  /** Starts the thread and opens the (already migrated) store in it. */
  static async open(path: string, options: WriterOpenOptions): Promise<WriterThread> {
    const thread = new WriterThread();
    thread.#path = path;
    thread.#redactSecrets = options.redactSecrets;
    await thread.#call({ op: "open", path, ...options });
    return thread;
  }

  /** The telemetry `seq` after the last write this thread made. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /**
   * Stores the events or metric points of one export request in one transaction. A refusal
   * that passes (busy, full, read-only) rejects with `StoreUnavailableError`. Row ids and
   * detection are computed here, so that the writer thread, the bottleneck of ingest, only
   * writes.
   */
  ingest(
    sender: Sender,
    events: TelemetryEvent[],
    points: readonly MetricSample[] = [],
    unmapped: readonly UnmappedRecords[] = [],
    dimensions: readonly SessionDimension[] = [],
  ): Promise<IngestSummary> {
    let prepared: PreparedEvents;
    try {
      prepared = {
        ids: eventRowIds(sender, events),
        findings: exportFindings(events, this.#redactSecrets),
      };
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#outage.track(
      this.#call({
        op: "ingest",
        sender,
        events,
        points,
        unmapped,
        dimensions,
        prepared,
      }) as Promise<
        IngestSummary
      >,
    );
  }

  /**
   * Rejects unless the store takes a write transaction; after writes were
   * refused for lack of space or permission, unless a real write goes through.
   */
  async probe(): Promise<void> {
    await this.#outage.probe(
      async () => void await this.#call({ op: "probe" }),
      async () => void await this.#call({ op: "probe", write: true, path: this.#path }),
    );
  }

  /** One retention pass. */
  runRetention(now = Date.now()): Promise<RetentionResult> {
    return this.#call({ op: "retention", now }) as Promise<RetentionResult>;
  }

  /** Waits for queued writes, checkpoints, closes the connection and ends the thread. */
  close(): Promise<void> {
    this.#closed ??= this.#call({ op: "close" }).catch(() => {}).then(() =>
      this.#worker.terminate()
    );
    return this.#closed;
  }

  #call(body: Body<WriterRequest>): Promise<unknown> {
    if (this.#failure !== null) return Promise.reject(new WriterError(this.#failure));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ ...body, id } as WriterRequest);
    });
  }

  #settle(response: WriterResponse): void {
    const pending = this.#pending.get(response.id);
    if (!pending) return;
    this.#pending.delete(response.id);
    if (response.ok) {
      this.#lastSeq = response.seq;
      pending.resolve(response.value);
    } else {
      const error = new WriterError(response.message, response.errcode);
      pending.reject(sqliteUnavailable(error) ?? error);
    }
  }
}
