/**
 * The benchmark's ingest phase: synthetic exports from `src/demo/mod.ts`
 * (batches of 512 records) sent to the server's `POST /v1/logs`, alternating
 * JSON and protobuf chunk by chunk so both encodings meet the same table
 * sizes. Each chunk's bodies are generated and encoded first, with the clock
 * stopped, then sent with a few requests in flight: the rates are the
 * server's, not the generator's, which is measured and reported apart.
 *
 * @module
 */
import { encodeJson, generateExports } from "../src/demo/mod.ts";
import { type JsonLogsRequest, protobufLogs } from "./otlp_protobuf.ts";
import { type BenchServer, procCpuMs } from "./_bench_server.ts";

/** Ingest figures of one encoding. */
export interface EncodingStats {
  calls: number;
  records: number;
  requests: number;
  bytes: number;
  /** Wall milliseconds spent sending (the clock runs only while sending). */
  ms: number;
  /** Server CPU milliseconds (all threads) while sending. */
  serverCpuMs: number;
  /** The same by thread name (see `BenchServer.threadCpuMs`). */
  threadCpuMs: Map<string, number>;
  /** CPU milliseconds of the store's own processes while sending (PostgreSQL); null: not read. */
  storeCpuMs: number | null;
  /** This process's CPU milliseconds while sending (HTTP client). */
  clientCpuMs: number;
  /** Requests answered with a partialSuccess (some records unusable). */
  partial: number;
}

/** What one chunk took. */
export interface ChunkStats {
  encoding: Encoding;
  calls: number;
  ms: number;
  /** Tool calls sent before this chunk. */
  before: number;
}

/** Everything the ingest phase measured. */
export interface IngestResult {
  json: EncodingStats;
  protobuf: EncodingStats;
  chunks: ChunkStats[];
  /** Client-side costs, clock stopped for the server: generating and encoding the bodies. */
  generateMs: number;
  encodeMs: Record<Encoding, number>;
  /** Tool calls sent in all. */
  calls: number;
}

export type Encoding = "json" | "protobuf";

/** Options of {@link ingest}. */
export interface IngestOptions {
  server: BenchServer;
  ingestKeys: readonly string[];
  targetCalls: number;
  /**
   * Generator options. Order `actor` (each actor's history in turn) stops at
   * `targetCalls` (`actors` must cover it); order `time` (every actor's
   * exports merged by time, as a live fleet sends them) sends the whole
   * stream, so that its data reaches `now` ( `actors` sizes it).
   */
  actors: number;
  order: "actor" | "time";
  days: number;
  seed: number;
  now: Date;
  /** Tool calls per chunk (alternating encodings). */
  chunkCalls: number;
  /** Requests in flight while sending. */
  concurrency: number;
  /** Cumulative CPU ms of the store's own processes (PostgreSQL's backends); null: unknown. */
  storeCpuMs?: () => Promise<number | null>;
  /** Runs after the last chunk is encoded, before it is sent (untimed). */
  beforeLastChunk?: (remainingCalls: number) => Promise<void>;
  /** Progress lines (stderr). */
  progress?: (line: string) => void;
}

interface Body {
  actor: number;
  bytes: Uint8Array;
  toolCalls: number;
  records: number;
}

function emptyStats(): EncodingStats {
  return {
    calls: 0,
    records: 0,
    requests: 0,
    bytes: 0,
    ms: 0,
    serverCpuMs: 0,
    threadCpuMs: new Map(),
    storeCpuMs: null,
    clientCpuMs: 0,
    partial: 0,
  };
}

/** Generates, encodes and sends `targetCalls` tool calls; see the module doc. */
export async function ingest(options: IngestOptions): Promise<IngestResult> {
  const result: IngestResult = {
    json: emptyStats(),
    protobuf: emptyStats(),
    chunks: [],
    generateMs: 0,
    encodeMs: { json: 0, protobuf: 0 },
    calls: 0,
  };
  const generator = generateExports({
    actors: options.actors,
    days: options.days,
    seed: options.seed,
    now: options.now,
    batchRecords: 512,
    order: options.order,
  });
  const cap = options.order === "time" ? Infinity : options.targetCalls;
  const pull = () => {
    const t0 = performance.now();
    const next = generator.next();
    result.generateMs += performance.now() - t0;
    return next.done ? null : next.value;
  };
  let pending = pull();
  let chunkIndex = 0;
  const started = performance.now();
  while (pending !== null && result.calls < cap) {
    const encoding: Encoding = chunkIndex++ % 2 === 0 ? "json" : "protobuf";
    const bodies: Body[] = [];
    let chunkCalls = 0;
    while (
      pending !== null && chunkCalls < options.chunkCalls && result.calls + chunkCalls < cap
    ) {
      const t1 = performance.now();
      const bytes = encoding === "json"
        ? encodeJson(pending.body)
        : protobufLogs(pending.body as JsonLogsRequest);
      result.encodeMs[encoding] += performance.now() - t1;
      bodies.push({
        actor: pending.actor,
        bytes,
        toolCalls: pending.toolCalls,
        records: pending.records,
      });
      chunkCalls += pending.toolCalls;
      pending = pull();
    }
    const last = pending === null || result.calls + chunkCalls >= cap;
    if (last && options.beforeLastChunk) await options.beforeLastChunk(chunkCalls);
    options.server.assertAlive();
    const stats = result[encoding];
    const serverCpu = await options.server.cpuMs();
    const threadCpu = await options.server.threadCpuMs();
    const storeCpu = await options.storeCpuMs?.() ?? null;
    const clientCpu = await procCpuMs("self");
    const sendStarted = performance.now();
    stats.partial += await send(options.server.ingestUrl, options.ingestKeys, bodies, {
      encoding,
      concurrency: options.concurrency,
    });
    const sendMs = performance.now() - sendStarted;
    stats.ms += sendMs;
    stats.serverCpuMs += await options.server.cpuMs() - serverCpu;
    for (const [name, ms] of await options.server.threadCpuMs()) {
      stats.threadCpuMs.set(
        name,
        (stats.threadCpuMs.get(name) ?? 0) + ms - (threadCpu.get(name) ?? 0),
      );
    }
    const storeCpuAfter = storeCpu === null ? null : await options.storeCpuMs!();
    if (storeCpu !== null && storeCpuAfter !== null) {
      stats.storeCpuMs = (stats.storeCpuMs ?? 0) + storeCpuAfter - storeCpu;
    }
    stats.clientCpuMs += await procCpuMs("self") - clientCpu;
    stats.calls += chunkCalls;
    stats.requests += bodies.length;
    for (const body of bodies) {
      stats.records += body.records;
      stats.bytes += body.bytes.length;
    }
    result.chunks.push({ encoding, calls: chunkCalls, ms: sendMs, before: result.calls });
    result.calls += chunkCalls;
    options.progress?.(
      `ingest ${result.calls.toLocaleString("en-US")}/${
        options.targetCalls.toLocaleString("en-US")
      } calls: this ${encoding} chunk ${
        Math.round(chunkCalls / sendMs * 1000).toLocaleString("en-US")
      } calls/s; ${((performance.now() - started) / 1000).toFixed(0)} s elapsed`,
    );
  }
  return result;
}

/** Sends the bodies with `concurrency` requests in flight; returns how many were partial. */
async function send(
  ingestUrl: string,
  ingestKeys: readonly string[],
  bodies: readonly Body[],
  options: { encoding: Encoding; concurrency: number },
): Promise<number> {
  const contentType = options.encoding === "json" ? "application/json" : "application/x-protobuf";
  let next = 0;
  let partial = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < bodies.length) {
      const body = bodies[next++]!;
      const response = await fetch(`${ingestUrl}/v1/logs`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${ingestKeys[body.actor]}`,
          "content-type": contentType,
        },
        body: body.bytes as Uint8Array<ArrayBuffer>,
      });
      const answer = new Uint8Array(await response.arrayBuffer());
      if (response.status !== 200) {
        throw new Error(
          `POST /v1/logs (${options.encoding}): ${response.status} ${
            new TextDecoder().decode(answer)
          }`,
        );
      }
      // An empty ExportLogsServiceResponse is `{}` in JSON and zero bytes in protobuf.
      const empty = options.encoding === "json"
        ? new TextDecoder().decode(answer).trim() === "{}"
        : answer.length === 0;
      if (!empty) partial++;
    }
  };
  const guarded = () =>
    worker().catch((error) => {
      failed = true;
      throw error;
    });
  // allSettled first: no request may be left running (or rejecting unhandled) on error.
  const outcomes = await Promise.allSettled(
    Array.from({ length: options.concurrency }, () => guarded()),
  );
  const rejected = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
  if (rejected) throw rejected.reason;
  return partial;
}
