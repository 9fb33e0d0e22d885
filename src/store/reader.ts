/**
 * A small pool of reader threads over `telemetry.db` with a time limit per
 * batch: a batch still running at the limit has its thread terminated (which
 * interrupts SQLite mid-query) and fails with {@link QueryTimeoutError}.
 *
 * @module
 */

import { sqliteQueries, type TelemetryQueries } from "./telemetry_queries.ts";
import type { TelemetryReader } from "./stores.ts";

/** One statement and its positional parameters. */
export interface ReadStatement {
  sql: string;
  params: (string | number | null)[];
}

/** Message to a reader thread. */
export interface ReadRequest {
  id: number;
  path: string;
  statements: ReadStatement[];
}

/** Message from a reader thread. */
export type ReadResponse =
  | { id: number; results: unknown[][]; error?: undefined }
  | { id: number; error: string; results?: undefined };

/** A batch ran past the query time limit and was stopped. */
export class QueryTimeoutError extends Error {
  override name = "QueryTimeoutError";
}

/** Too many batches are waiting: the caller should retry later. */
export class QueryQueueFullError extends Error {
  override name = "QueryQueueFullError";
}

/** A batch failed inside SQLite. */
export class QueryFailedError extends Error {
  override name = "QueryFailedError";
}

interface Job {
  request: ReadRequest;
  resolve: (results: unknown[][]) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Options of {@link ReaderPool}. */
export interface ReaderPoolOptions {
  path: string;
  threads: number;
  timeoutMs: number;
  /** Batches allowed to wait for a thread; past it, reads fail with {@link QueryQueueFullError}. */
  maxQueued?: number;
}

/** Runs read batches on a fixed number of threads, queueing the rest. */
export class ReaderPool implements TelemetryReader {
  readonly queries: TelemetryQueries = sqliteQueries;
  readonly #options: ReaderPoolOptions;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: ReaderPoolOptions) {
    this.#options = options;
    for (let i = 0; i < options.threads; i++) this.#slots.push(this.#spawn());
  }

  /** Runs the statements in one snapshot; resolves with one row array per statement. */
  read(statements: ReadStatement[]): Promise<unknown[][]> {
    if (this.#closed) return Promise.reject(new QueryFailedError("Reader pool is closed"));
    if (this.#queue.length >= (this.#options.maxQueued ?? 256)) {
      return Promise.reject(new QueryQueueFullError("Too many queries waiting"));
    }
    return new Promise((resolve, reject) => {
      const request = { id: this.#nextId++, path: this.#options.path, statements };
      this.#queue.push({ request, resolve, reject });
      this.#dispatch();
    });
  }

  /** Stops every thread; pending batches fail. */
  close(): void {
    this.#closed = true;
    for (const slot of this.#slots) {
      clearTimeout(slot.timer);
      slot.worker.terminate();
      slot.job?.reject(new QueryFailedError("Reader pool is closed"));
    }
    for (const job of this.#queue.splice(0)) {
      job.reject(new QueryFailedError("Reader pool is closed"));
    }
  }

  #spawn(): Slot {
    const worker = new Worker(new URL("./read_worker.ts", import.meta.url), { type: "module" });
    const slot: Slot = { worker, job: null, timer: undefined };
    worker.onmessage = (message: MessageEvent<ReadResponse>) => this.#finish(slot, message.data);
    worker.onerror = (event) => {
      event.preventDefault();
      this.#replace(slot, new QueryFailedError(event.message));
    };
    return slot;
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (slot.job !== null) continue;
      const job = this.#queue.shift();
      if (!job) return;
      slot.job = job;
      slot.timer = setTimeout(
        () => this.#replace(slot, new QueryTimeoutError("Query time limit exceeded")),
        this.#options.timeoutMs,
      );
      slot.worker.postMessage(job.request);
    }
  }

  #finish(slot: Slot, response: ReadResponse): void {
    const job = slot.job;
    if (!job || job.request.id !== response.id) return;
    clearTimeout(slot.timer);
    slot.job = null;
    if (response.error !== undefined) job.reject(new QueryFailedError(response.error));
    else job.resolve(response.results);
    this.#dispatch();
  }

  /** Terminates a slot's thread (interrupting its query) and starts a fresh one. */
  #replace(slot: Slot, error: Error): void {
    clearTimeout(slot.timer);
    slot.worker.terminate();
    const job = slot.job;
    const index = this.#slots.indexOf(slot);
    if (index >= 0 && !this.#closed) this.#slots[index] = this.#spawn();
    job?.reject(error);
    this.#dispatch();
  }
}
