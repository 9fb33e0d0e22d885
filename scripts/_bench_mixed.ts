/**
 * The benchmark's mixed-load phase: a fixed number of keep-alive HTTP
 * connections, each a client that sends its next request as soon as the
 * previous one is answered (closed loop), for a fixed time. Each request's
 * class is drawn by weight (lists, details, insights, ingest) from a seeded
 * generator, so the request mix is the weights' and runs are comparable.
 * Every connection is its own `Deno.HttpClient` holding at most one socket
 * per listener; the sockets really open are counted from `/proc/net/tcp`.
 *
 * @module
 */
import { encodeJson, generateExports } from "../src/demo/mod.ts";
import { procCpuMs } from "./_bench_server.ts";
import { type JsonLogsRequest, protobufLogs } from "./otlp_protobuf.ts";

/** The classes of request of the mixed load. */
export type MixedClass = "list" | "detail" | "insight" | "ingest";

/** Share of each class among the requests sent. */
export const MIXED_WEIGHTS: Readonly<Record<MixedClass, number>> = {
  list: 0.4,
  detail: 0.2,
  insight: 0.2,
  ingest: 0.2,
};

/** A GET on the query listener: its label in the report and its path. */
export interface MixedGet {
  kind: string;
  path: string;
}

/** A POST on the ingest listener. */
export interface MixedPost {
  kind: string;
  path: string;
  contentType: string;
  ingestKey: string;
  body: Uint8Array;
  /** Tool calls (or points) the body carries, to report what the ingest share wrote. */
  items: number;
}

/** What the clients send: each function gives the next request of its class. */
export interface MixedRequests {
  list(random: () => number): MixedGet;
  detail(random: () => number): MixedGet;
  insight(random: () => number): MixedGet;
  ingest(random: () => number): MixedPost;
}

/** Options of {@link mixedLoad}. */
export interface MixedOptions {
  queryUrl: string;
  ingestUrl: string;
  apiKey: string;
  connections: number;
  durationMs: number;
  requests: MixedRequests;
  seed: number;
}

/** Latencies and failures of one class, and of each kind within it. */
export interface ClassStats {
  /** Milliseconds of the answers with a 2xx status. */
  samples: number[];
  byKind: Map<string, number[]>;
  /** 5xx answers by status. */
  serverErrors: Record<number, number>;
  /** Other failures: a 4xx status, or the request failing (`network`), by cause. */
  errors: Record<string, number>;
  /** Items (tool calls) in the 2xx answered ingest bodies. */
  items: number;
}

/** Everything the mixed load measured. */
export interface MixedResult {
  classes: Record<MixedClass, ClassStats>;
  /** Wall milliseconds from the first request to the last answer. */
  ms: number;
  /**
   * Most client sockets seen established at once per listener (sampled every
   * 250 ms), less those this process had open before the load.
   */
  sockets: { query: number; ingest: number };
  /** This process's CPU milliseconds during the load (the load generator). */
  clientCpuMs: number;
}

const CLASSES = Object.keys(MIXED_WEIGHTS) as MixedClass[];

function emptyStats(): ClassStats {
  return { samples: [], byKind: new Map(), serverErrors: {}, errors: {}, items: 0 };
}

/** mulberry32: a small seeded generator, one stream per connection. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function classOf(draw: number): MixedClass {
  let at = 0;
  for (const name of CLASSES) {
    at += MIXED_WEIGHTS[name];
    if (draw < at) return name;
  }
  return CLASSES.at(-1)!;
}

/** Runs the mixed load; see the module doc. Failures are counted, never thrown. */
export async function mixedLoad(options: MixedOptions): Promise<MixedResult> {
  const classes = Object.fromEntries(CLASSES.map((c) => [c, emptyStats()])) as Record<
    MixedClass,
    ClassStats
  >;
  const clients = Array.from(
    { length: options.connections },
    () => Deno.createHttpClient({ poolMaxIdlePerHost: 1 }),
  );
  const ports = {
    query: Number(new URL(options.queryUrl).port),
    ingest: Number(new URL(options.ingestUrl).port),
  };
  const sockets = { query: 0, ingest: 0 };
  const countSockets = async () => {
    const now = await establishedTo(ports);
    sockets.query = Math.max(sockets.query, now.query);
    sockets.ingest = Math.max(sockets.ingest, now.ingest);
  };
  // Sockets this process had open before (idle keep-alive ones of the global fetch) are not the load's.
  const before = await establishedTo(ports);
  const sampler = setInterval(countSockets, 250);
  const cpuBefore = await procCpuMs("self");
  const started = performance.now();
  const deadline = started + options.durationMs;
  try {
    await Promise.all(clients.map(async (client, index) => {
      const random = seededRandom(options.seed * 7919 + index);
      while (performance.now() < deadline) {
        const kind = classOf(random());
        const stats = classes[kind];
        const post = kind === "ingest" ? options.requests.ingest(random) : null;
        const get = kind === "ingest" ? null : options.requests[kind](random);
        const label = post?.kind ?? get!.kind;
        const t0 = performance.now();
        try {
          const response = post
            ? await sendExport(options.ingestUrl, post, client)
            : await fetch(`${options.queryUrl}${get!.path}`, {
              client,
              headers: { authorization: `Bearer ${options.apiKey}` },
            });
          await response.arrayBuffer();
          const elapsed = performance.now() - t0;
          if (response.status >= 200 && response.status < 300) {
            stats.samples.push(elapsed);
            const byKind = stats.byKind.get(label) ?? [];
            byKind.push(elapsed);
            stats.byKind.set(label, byKind);
            stats.items += post?.items ?? 0;
          } else if (response.status >= 500) {
            stats.serverErrors[response.status] = (stats.serverErrors[response.status] ?? 0) + 1;
          } else {
            const cause = `${response.status} ${label}`;
            stats.errors[cause] = (stats.errors[cause] ?? 0) + 1;
          }
        } catch (error) {
          const cause = `network: ${error instanceof Error ? error.message.slice(0, 80) : error}`;
          stats.errors[cause] = (stats.errors[cause] ?? 0) + 1;
        }
      }
    }));
  } finally {
    clearInterval(sampler);
    for (const client of clients) client.close();
  }
  const ms = performance.now() - started;
  const clientCpuMs = await procCpuMs("self") - cpuBefore;
  return {
    classes,
    ms,
    sockets: {
      query: Math.max(0, sockets.query - before.query),
      ingest: Math.max(0, sockets.ingest - before.ingest),
    },
    clientCpuMs,
  };
}

/** POSTs one generated export to the ingest listener (its answer's body not yet read). */
export function sendExport(
  ingestUrl: string,
  post: ReturnType<MixedRequests["ingest"]>,
  client?: Deno.HttpClient,
): Promise<Response> {
  return fetch(`${ingestUrl}${post.path}`, {
    ...(client ? { client } : {}),
    method: "POST",
    headers: { authorization: `Bearer ${post.ingestKey}`, "content-type": post.contentType },
    body: post.body as Uint8Array<ArrayBuffer>,
  });
}

/** Client-side sockets established to each port now (loopback, IPv4 and IPv6). */
async function establishedTo(
  ports: { query: number; ingest: number },
): Promise<{ query: number; ingest: number }> {
  const hex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  const query = hex(ports.query);
  const ingest = hex(ports.ingest);
  const counts = { query: 0, ingest: 0 };
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    const text = await Deno.readTextFile(table).catch(() => "");
    for (const line of text.split("\n")) {
      // sl local_address rem_address st …; st 01 is ESTABLISHED.
      const fields = line.trim().split(/\s+/, 4);
      if (fields[3] !== "01") continue;
      if (fields[2]!.endsWith(query)) counts.query++;
      else if (fields[2]!.endsWith(ingest)) counts.ingest++;
    }
  }
  return counts;
}

/**
 * Log records per ingest request of the mixed load: what one busy agent's
 * exporter sends per interval (Claude Code exports logs every 5 s by
 * default), not the bulk phase's 512.
 */
export const MIXED_INGEST_RECORDS = 16;

/**
 * The ingest share's requests: fresh exports of the generator (recent days,
 * so they reach the 7-day windows), JSON and protobuf alternating, made as
 * they are sent (their cost is in the load generator's CPU). A new seed
 * each pass, so nothing repeats an earlier run's ids.
 */
export function generatedIngest(options: {
  ingestKeys: readonly string[];
  seed: number;
  now: Date;
}): MixedRequests["ingest"] {
  let pass = 0;
  let exports = generateExports({
    actors: options.ingestKeys.length,
    days: 2,
    seed: options.seed,
    now: options.now,
    batchRecords: MIXED_INGEST_RECORDS,
  });
  let sent = 0;
  return () => {
    let next = exports.next();
    for (let empty = 0; next.done; empty++) {
      if (empty === 3) throw new Error("The generator made no exports for the mixed load");
      exports = generateExports({
        actors: options.ingestKeys.length,
        days: 2,
        seed: options.seed + ++pass,
        now: options.now,
        batchRecords: MIXED_INGEST_RECORDS,
      });
      next = exports.next();
    }
    const json = sent++ % 2 === 0;
    return {
      kind: json ? "POST /v1/logs JSON" : "POST /v1/logs protobuf",
      path: "/v1/logs",
      contentType: json ? "application/json" : "application/x-protobuf",
      ingestKey: options.ingestKeys[next.value.actor]!,
      body: json ? encodeJson(next.value.body) : protobufLogs(next.value.body as JsonLogsRequest),
      items: next.value.toolCalls,
    };
  };
}
