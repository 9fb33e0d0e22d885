/**
 * Counts the exports this node is receiving at each moment: OTLP/HTTP
 * requests from arrival to answer, and every write of the telemetry writer
 * (gRPC exports included). While one is in flight the node is under ingest,
 * and insights may answer from a replica state within the freshness bound
 * (`src/analytics/mod.ts`).
 *
 * @module
 */
import type { RetentionResult, TelemetryWriterApi } from "../store/stores.ts";

/** Exports in flight on this node. */
export class IngestActivity {
  /** OTLP/HTTP export requests being answered. */
  #requests = 0;
  /** Writes in progress (an HTTP export's, or a gRPC export's). */
  #writes = 0;
  #lastOverlap = -Infinity;
  readonly #listeners = new Set<() => void>();
  readonly #writtenListeners = new Set<() => void>();

  /** Exports being received or written now (an HTTP export being written counts twice). */
  get inFlight(): number {
    return this.#requests + this.#writes;
  }

  /**
   * When an export last started while another was in flight (`Date.now()`
   * ms; -Infinity before): several senders at once, which one client waiting
   * for each acknowledgement never is.
   */
  get lastOverlap(): number {
    return this.#lastOverlap;
  }

  /** Calls `listener` whenever an export (or a write) starts, until the returned function is called. */
  onStart(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Calls `listener` whenever a write settles (stored or failed), until the returned function is called. */
  onWritten(listener: () => void): () => void {
    this.#writtenListeners.add(listener);
    return () => this.#writtenListeners.delete(listener);
  }

  #started(alreadyInFlight: number): void {
    if (alreadyInFlight > 0) this.#lastOverlap = Date.now();
    for (const listener of this.#listeners) listener();
  }

  /** The ingest listener's handler, counting each POST until it is answered. */
  countRequests(
    handler: (request: Request) => Promise<Response>,
  ): (request: Request) => Promise<Response> {
    return async (request) => {
      if (request.method !== "POST") return await handler(request);
      this.#started(this.#requests++);
      try {
        return await handler(request);
      } finally {
        this.#requests--;
      }
    };
  }

  /** The writer, counting each `ingest` call until it settles. */
  countWrites(writer: TelemetryWriterApi): TelemetryWriterApi {
    return new CountedWriter(writer, (delta) => {
      if (delta > 0) this.#started(this.#writes);
      this.#writes += delta;
      if (delta < 0) { for (const listener of this.#writtenListeners) listener(); }
    });
  }
}

class CountedWriter implements TelemetryWriterApi {
  readonly #writer: TelemetryWriterApi;
  readonly #count: (delta: number) => void;

  constructor(writer: TelemetryWriterApi, count: (delta: number) => void) {
    this.#writer = writer;
    this.#count = count;
  }

  get lastSeq(): number {
    return this.#writer.lastSeq;
  }

  async ingest(...args: Parameters<TelemetryWriterApi["ingest"]>) {
    this.#count(1);
    try {
      return await this.#writer.ingest(...args);
    } finally {
      this.#count(-1);
    }
  }

  probe(): Promise<void> {
    return this.#writer.probe();
  }

  runRetention(now?: number): Promise<RetentionResult> {
    return this.#writer.runRetention(now);
  }

  close(): Promise<void> {
    return this.#writer.close();
  }
}
