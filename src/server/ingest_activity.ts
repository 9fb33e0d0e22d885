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
  #inFlight = 0;
  #lastStart = -Infinity;
  readonly #listeners = new Set<() => void>();

  /** Exports being received or written now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** When the last export (or write) started, `Date.now()` ms; -Infinity before the first. */
  get lastStart(): number {
    return this.#lastStart;
  }

  /** Calls `listener` whenever an export (or a write) starts, until the returned function is called. */
  onStart(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #count(delta: number): void {
    this.#inFlight += delta;
    if (delta <= 0) return;
    this.#lastStart = Date.now();
    for (const listener of this.#listeners) listener();
  }

  /** The ingest listener's handler, counting each POST until it is answered. */
  countRequests(
    handler: (request: Request) => Promise<Response>,
  ): (request: Request) => Promise<Response> {
    return async (request) => {
      if (request.method !== "POST") return await handler(request);
      this.#count(1);
      try {
        return await handler(request);
      } finally {
        this.#count(-1);
      }
    };
  }

  /** The writer, counting each `ingest` call until it settles. */
  countWrites(writer: TelemetryWriterApi): TelemetryWriterApi {
    return new CountedWriter(writer, (delta) => this.#count(delta));
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
