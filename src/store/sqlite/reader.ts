/**
 * A small pool of reader threads over `telemetry.db` with a time limit per
 * batch: a batch still running at the limit has its thread terminated (which
 * interrupts SQLite mid-query) and fails with {@link QueryTimeoutError}.
 * A batch goes only to a thread that has said it is ready, and its limit
 * starts when the thread begins it: a thread's start-up (loading, and
 * type-checking under `deno test`, can take seconds on a busy machine) never
 * counts against a query.
 *
 * Each thread holds up to {@link PIPELINE_DEPTH} batches, run in order, so it
 * starts the next as soon as one ends instead of waiting for the event loop
 * to take its answer and send another (under load that wait, not SQLite, was
 * what lists queued for). A thread stopped at a batch's limit takes the
 * batches behind it down too: they go back to the front of the queue.
 *
 * @module
 */

import sqliteQueriesSql from "../../../sql/sqlite/queries.sql" with { type: "text" };
import { QueryFailedError, QueryQueueFullError, QueryTimeoutError } from "../../errors.ts";
import type { TelemetryReader } from "../stores.ts";
import type { ReaderMessage, ReadRequest, ReadResponse } from "./read_worker.ts";
import {
  type ReadStatement,
  type TelemetryQueries,
  telemetryQueries,
} from "../telemetry_queries.ts";

/** The read statements of `telemetry.db`. */
export const sqliteQueries: TelemetryQueries = telemetryQueries(sqliteQueriesSql);

interface Job {
  request: ReadRequest;
  resolve: (results: unknown[][]) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  /** Batches sent to the thread, in the order it runs them; the first is running. */
  jobs: Job[];
  /** The time limit of the first batch. */
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Batches sent ahead to one thread. */
const PIPELINE_DEPTH = 4;

/** Options of {@link ReaderPool}. */
export interface ReaderPoolOptions {
  path: string;
  threads: number;
  timeoutMs: number;
  /** Batches allowed to wait for a thread; past it, reads fail with {@link QueryQueueFullError}. */
  maxQueued?: number;
  /** The thread's module (tests use one that starts slowly); `read_worker.ts` by default. */
  workerUrl?: URL;
}

/** Runs read batches on a fixed number of threads, queueing the rest. */
export class ReaderPool implements TelemetryReader {
  readonly queries: TelemetryQueries = sqliteQueries;
  readonly #options: ReaderPoolOptions;
  readonly #slots: Slot[] = [];
  readonly #queue: Job[] = [];
  readonly #allReady = Promise.withResolvers<void>();
  #nextId = 1;
  #closed = false;

  constructor(options: ReaderPoolOptions) {
    this.#options = options;
    for (let i = 0; i < options.threads; i++) this.#slots.push(this.#spawn());
  }

  /** Resolves once every thread has started (the server awaits it before it listens). */
  ready(): Promise<void> {
    return this.#allReady.promise;
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
    this.#allReady.resolve();
    for (const slot of this.#slots) {
      clearTimeout(slot.timer);
      slot.worker.terminate();
      for (const job of slot.jobs.splice(0)) {
        job.reject(new QueryFailedError("Reader pool is closed"));
      }
    }
    for (const job of this.#queue.splice(0)) {
      job.reject(new QueryFailedError("Reader pool is closed"));
    }
  }

  #spawn(): Slot {
    const url = this.#options.workerUrl ?? new URL("./read_worker.ts", import.meta.url);
    const worker = new Worker(url, { type: "module" });
    const slot: Slot = { worker, ready: false, jobs: [], timer: undefined };
    worker.onmessage = (message: MessageEvent<ReaderMessage>) => {
      const data = message.data;
      if ("ready" in data) {
        slot.ready = true;
        if (this.#slots.every((s) => s.ready)) this.#allReady.resolve();
        this.#dispatch();
      } else {
        this.#finish(slot, data);
      }
    };
    worker.onerror = (event) => {
      event.preventDefault();
      this.#replace(slot, new QueryFailedError(event.message));
    };
    return slot;
  }

  /** Sends queued batches to ready threads, the least loaded first, up to the depth. */
  #dispatch(): void {
    for (let depth = 0; depth < PIPELINE_DEPTH && this.#queue.length > 0; depth++) {
      for (const slot of this.#slots) {
        if (!slot.ready || slot.jobs.length > depth) continue;
        const job = this.#queue.shift();
        if (!job) return;
        slot.jobs.push(job);
        if (slot.jobs.length === 1) this.#startLimit(slot);
        slot.worker.postMessage(job.request);
      }
    }
  }

  /** Starts the time limit of the slot's first batch, which its thread is running now. */
  #startLimit(slot: Slot): void {
    slot.timer = setTimeout(
      () => this.#replace(slot, new QueryTimeoutError("Query time limit exceeded")),
      this.#options.timeoutMs,
    );
  }

  #finish(slot: Slot, response: ReadResponse): void {
    const job = slot.jobs[0];
    if (!job || job.request.id !== response.id) return;
    clearTimeout(slot.timer);
    slot.jobs.shift();
    if (slot.jobs.length > 0) this.#startLimit(slot);
    if (response.error !== undefined) job.reject(new QueryFailedError(response.error));
    else job.resolve(response.results);
    this.#dispatch();
  }

  /**
   * Terminates a slot's thread (interrupting its query) and starts a fresh
   * one; the running batch fails with `error`, those behind it are queued again.
   */
  #replace(slot: Slot, error: Error): void {
    clearTimeout(slot.timer);
    slot.worker.terminate();
    const [running, ...waiting] = slot.jobs.splice(0);
    const index = this.#slots.indexOf(slot);
    if (index >= 0 && !this.#closed) this.#slots[index] = this.#spawn();
    running?.reject(error);
    this.#queue.unshift(...waiting);
    this.#dispatch();
  }
}
