/**
 * The benchmark: builds a data directory of realistic telemetry through the
 * real ingest path, starts the real server (`main.ts serve`, a child process
 * on loopback), measures it over HTTP from this separate process, and prints
 * a Markdown report (also written to `.bench/bench-<calls>-<engine>.md`).
 *
 * ```sh
 * deno task bench [--calls N] [--quick] [--keep DIR | --reuse DIR]
 *                 [--database postgres://USER@HOST:PORT/DB]
 *                 [--concurrency N] [--order time|actor]
 *                 [--sqlite-runs N] [--sqlite-cap S]
 *                 [--mixed] [--metrics] [--export] [--mixed-seconds S] [--connections N]
 * ```
 *
 * - `--calls N`: tool calls to ingest (default 1,000,000; in time order the
 *   generator's whole stream for that many, within a few percent).
 * - `--order time|actor`: how the actors' exports are sent (default `time`):
 *   merged by time, as a live fleet sends them, so indexes keyed by time grow
 *   at their newest end; or `actor`, each actor's 100 days in turn, a
 *   backfill that inserts every actor's calls all over those indexes.
 * - `--database URL`: run the server on PostgreSQL instead of the embedded
 *   SQLite files. URL names a server (and a database to connect to for
 *   administration); the benchmark creates an empty database
 *   `bench_<random>` on it, runs `serve --database` on that, and drops it at
 *   the end unless `--keep` is given. `AGENT_TELEMETRY_DATABASE_URL` is not
 *   read: the engine is the flag's choice alone.
 * - `--quick`: 100,000 calls and few samples — the CI smoke run. Like every
 *   run, it fails (non-zero exit) only on errors, never on timing.
 * - `--keep DIR`: build the data directory in DIR (new or empty) and keep it
 *   (with `--database`, the database too; DIR then holds the replica and
 *   `bench-meta.json`, which names the database).
 * - `--reuse DIR`: skip ingest and measure a directory an earlier `--keep`
 *   run built (on the engine that run used); that run's ingest figures are
 *   carried over and marked.
 * - `--concurrency N`: ingest requests in flight (default 4).
 * - `--sqlite-runs N`: runs of each insight baseline (default 5, 1 above 2M
 *   calls, 2 with `--quick`). The baseline is the same insight computed on
 *   the store itself: SQLite in-process, or with `--database` PostgreSQL
 *   directly (`sql/insights/postgres/`).
 * - `--sqlite-cap S`: seconds one baseline may run before it is stopped and
 *   reported as "> S s" (default 180; longer windows of the same insight are
 *   then skipped).
 * - `--mixed`, `--metrics`, `--export`, `--retention`, `--insights`: run only these phases (after
 *   ingest, or over a `--reuse DIR`); the report goes to `bench-<calls>-<engine>-<phases>.md`.
 *   `--insights` is the insights over HTTP (after new data, then repeated), without the in-process
 *   rebuild and baselines.
 *   Without either, every phase runs, these two last.
 * - `--mixed-seconds S`: length of the mixed load (default 60, 10 with
 *   `--quick`); `--connections N`: its connections (default 200).
 *
 * Phases: ingest (JSON and protobuf chunks alternating, bodies pre-encoded
 * with the clock stopped), the replica at the end of ingest, lists, details,
 * insights over HTTP, the export of every call over HTTP, footprint, start-up, a replica build in the server
 * (its file deleted), then in-process: replica rebuild, DuckDB vs
 * the store's own insights, detection; last, on a fresh server, metrics
 * ingest (`_bench_metrics.ts`) and the mixed load (`_bench_mixed.ts`), which
 * add data to the store. The phases read the store directly
 * only through `_bench_store.ts`. The temporary directory, the server and a
 * database created for the run are removed/stopped/dropped on success, error
 * and SIGINT/SIGTERM alike.
 *
 * @module
 */
import { measureDecode } from "./_bench_decode.ts";
import { parseArgs } from "node:util";
import { handleHelp, parseOrExit } from "./_script_args.ts";
import {
  type Analytics,
  FOLLOW_MS,
  INSIGHT_NAMES,
  type InsightName,
  insightWindow,
  openAnalytics,
  SQLITE_ROUTES,
  type WindowName,
} from "../src/analytics/mod.ts";
import { detectToolCall } from "../src/detect/mod.ts";
import { mapRecord } from "../src/ingest/agents/mod.ts";
import { decodeExport } from "../src/ingest/otlp/mod.ts";
import type { ToolCallEvent } from "../src/model/telemetry.ts";
import { openKeyStoreFor } from "../src/store/open_stores.ts";
import { encodeJson, generateExports } from "../src/demo/mod.ts";
import { ingest, type IngestResult } from "./_bench_ingest.ts";
import {
  bytes,
  describeRun,
  type Figure,
  getJson,
  int,
  latencyRun,
  ms,
  percentile,
  Report,
  timedGet,
  times,
  verdict,
} from "./_bench_measure.ts";
import { metricsIngest } from "./_bench_metrics.ts";
import {
  type ClassStats,
  generatedIngest,
  MIXED_INGEST_RECORDS,
  type MixedClass,
  mixedLoad,
  type MixedRequests,
  sendExport,
} from "./_bench_mixed.ts";
import { ingestDuringRetention } from "./_bench_retention.ts";
import { BenchServer, killAllServers, OtherLoad, type RssSample, tail } from "./_bench_server.ts";
import {
  type BenchStore,
  fileBytes,
  PostgresBenchStore,
  SqliteBenchStore,
} from "./_bench_store.ts";

const USAGE = `deno task bench [--calls N] [--quick] [--keep DIR | --reuse DIR]
                [--database postgres://USER@HOST:PORT/DB] [--concurrency N] [--order time|actor]
                [--sqlite-runs N] [--sqlite-cap S] [--mixed] [--metrics] [--export] [--retention]
                [--insights] [--mixed-seconds S] [--connections N]
Measures ingest, lists, details, insights, export, footprint and a mixed load of a real server
(1,000,000 tool calls by default; --quick: 100,000). scripts/bench.ts says what each flag does.`;
handleHelp(USAGE);
const args = parseOrExit(USAGE, () =>
  parseArgs({
    args: Deno.args,
    options: {
      calls: { type: "string" },
      quick: { type: "boolean", default: false },
      keep: { type: "string" },
      reuse: { type: "string" },
      database: { type: "string" },
      concurrency: { type: "string", default: "4" },
      order: { type: "string", default: "time" },
      "sqlite-runs": { type: "string" },
      "sqlite-cap": { type: "string" },
      mixed: { type: "boolean", default: false },
      metrics: { type: "boolean", default: false },
      export: { type: "boolean", default: false },
      retention: { type: "boolean", default: false },
      insights: { type: "boolean", default: false },
      "mixed-seconds": { type: "string" },
      connections: { type: "string", default: "200" },
    },
  }));
const quick = args.values.quick;
const reuseDir = args.values.reuse;
const keepDir = args.values.keep;
if (reuseDir && keepDir) usage("--keep and --reuse exclude each other");
const databaseServer = args.values.database ?? null;
if (databaseServer !== null && !/^postgres(ql)?:\/\/\S+$/.test(databaseServer)) {
  usage(`--database takes a postgres:// URL: ${JSON.stringify(databaseServer)}`);
}
const requestedCalls = Number(args.values.calls ?? (quick ? 100_000 : 1_000_000));
if (!Number.isSafeInteger(requestedCalls) || requestedCalls < 1_000) {
  usage("--calls takes an integer of at least 1000");
}
const ingestConcurrency = Number(args.values.concurrency);
if (!Number.isSafeInteger(ingestConcurrency) || ingestConcurrency < 1) {
  usage("--concurrency takes a positive integer");
}
const order = args.values.order as "time" | "actor";
if (order !== "time" && order !== "actor") usage("--order takes time or actor");
/** With `--mixed`, `--metrics` or `--export`, only the phases named (after ingest, or over `--reuse`). */
const onlyPhases = [
  ...(args.values.metrics ? ["metrics"] : []),
  ...(args.values.mixed ? ["mixed"] : []),
  ...(args.values.export ? ["export"] : []),
  ...(args.values.retention ? ["retention"] : []),
  ...(args.values.insights ? ["insights"] : []),
];
const runs = (phase: "metrics" | "mixed" | "export" | "retention" | "insights") =>
  onlyPhases.length === 0 || onlyPhases.includes(phase);
const mixedConnections = Number(args.values.connections);
if (!Number.isSafeInteger(mixedConnections) || mixedConnections < 1) {
  usage("--connections takes a positive integer");
}
const mixedSeconds = Number(args.values["mixed-seconds"] ?? (quick ? 10 : 60));
if (!(mixedSeconds > 0)) usage("--mixed-seconds takes a positive number");

/** Sample counts and time budgets: small for the smoke run. */
const budget = quick
  ? {
    listSamples: 40,
    listConcurrentSamples: 64,
    listBudgetMs: 3_000,
    pageSamples: 30,
    detailSamples: 40,
    insightRuns: 5,
    baselineRuns: 2,
    startups: 2,
    detectionMs: 500,
    metricsMs: 2_000,
  }
  : {
    listSamples: 300,
    listConcurrentSamples: 480,
    listBudgetMs: 20_000,
    pageSamples: 200,
    detailSamples: 300,
    insightRuns: 20,
    baselineRuns: requestedCalls > 2_000_000 ? 1 : 5,
    startups: 3,
    detectionMs: 3_000,
    metricsMs: 10_000,
  };
if (args.values["sqlite-runs"] !== undefined) {
  budget.baselineRuns = Number(args.values["sqlite-runs"]);
}
const baselineCapMs = Number(args.values["sqlite-cap"] ?? 180) * 1000;

/** `callsPerActor`: the generator's mean over 60 actors (13,214; 10,786 to 16,303). */
const GENERATOR = { days: 100, seed: 7, callsPerActor: 13_200 };
const WINDOWS: readonly WindowName[] = ["7d", "30d", "90d"];
const DAY = 86_400_000;

const report = new Report();
const notes: string[] = [];
/** Extra Markdown sections after the main table. */
const sections: string[] = [];

function usage(message: string): never {
  // deno-lint-ignore no-console
  console.error(`bench: ${message}`);
  Deno.exit(2);
}

function progress(line: string): void {
  // deno-lint-ignore no-console
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
}

// ----------------------------------------------------------------------- data directory

/** What `--keep` leaves in the directory for `--reuse`. */
interface BenchMeta {
  orgId: string;
  apiKey: string;
  actorIds: string[];
  calls: number;
  builtAt: string;
  commit: string;
  /** The PostgreSQL database the run built (absent or null: the data directory's SQLite files). */
  database?: string | null;
  /** Ingest and catch-up figures of the building run. */
  figures: Figure[];
}

const META_FILE = "bench-meta.json";

async function isEmptyDir(path: string): Promise<boolean> {
  try {
    for await (const _ of Deno.readDir(path)) return false;
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return true;
    throw error;
  }
}

/** The organization, its API key and one actor per ingest key, in the store the server will use. */
async function createKeys(dir: string, databaseUrl: string | null, actors: number) {
  const keys = await openKeyStoreFor(dir, databaseUrl);
  try {
    const org = await keys.createOrg("Bench");
    const member = await keys.addMember(org.id, "bench@example.com");
    const apiKey = (await keys.createKey(org.id, member.id, "bench")).key;
    const created: { actor_id: string; ingest_key: string }[] = [];
    for (let i = 0; i < actors; i++) created.push(await keys.createActor(org.id, `a${i}`));
    return {
      orgId: org.id,
      apiKey,
      actorIds: created.map((a) => a.actor_id),
      ingestKeys: created.map((a) => a.ingest_key),
    };
  } finally {
    await keys.close();
  }
}

// ----------------------------------------------------------------------------- phases

async function ingestPhase(
  server: BenchServer,
  store: BenchStore,
  keys: { ingestKeys: string[] },
  targetCalls: number,
  actors: number,
  now: Date,
): Promise<IngestResult> {
  const chunkCalls = Math.min(50_000, Math.max(5_000, Math.round(targetCalls / 20)));
  let seqBefore = 0;
  let catchUpNote = "";
  const result = await ingest({
    server,
    ingestKeys: keys.ingestKeys,
    targetCalls,
    actors,
    days: GENERATOR.days,
    seed: GENERATOR.seed,
    order,
    now,
    chunkCalls,
    concurrency: ingestConcurrency,
    storeCpuMs: () => store.cpuMs(),
    progress,
    beforeLastChunk: async () => {
      // The replica follows the writes: what the first insight finds left to copy.
      await rssPhase(server, "first insight at the end of ingest");
      seqBefore = await store.seq();
      progress(`first insight at the end of ingest (seq ${int(seqBefore)})`);
      catchUpNote = await endOfIngestCatchUp(server);
      await rssPhase(server, "last chunk and its incremental catch-up");
    },
  });
  const stored = await store.toolCalls();
  if (stored !== result.calls) {
    throw new Error(`Sent ${result.calls} tool calls but tool_calls holds ${stored}`);
  }
  for (const encoding of ["json", "protobuf"] as const) {
    const s = result[encoding];
    const rate = (s.calls / s.ms) * 1000;
    const goal = encoding === "json" ? 30_000 : 50_000;
    report.add(
      "Ingest",
      `${
        encoding === "json" ? "JSON" : "protobuf"
      } POST /v1/logs, 512 records per request, detection on`,
      `${int(rate)} tool calls/s (${int(s.calls)} calls in ${int(s.requests)} requests, ${
        (s.ms / 1000).toFixed(1)
      } s; ${int(s.bytes / s.calls)} B/call${s.partial > 0 ? `; ${s.partial} partial` : ""})`,
      { text: `≥ ${int(goal)}/s`, met: rate >= goal },
    );
  }
  const both = result.json.ms + result.protobuf.ms;
  const tenth = (from: number, to: number) => {
    const chunks = result.chunks.filter((c) => c.before >= from && c.before < to);
    const calls = chunks.reduce((s, c) => s + c.calls, 0);
    return (calls / chunks.reduce((s, c) => s + c.ms, 0)) * 1000;
  };
  report.add(
    "Ingest",
    "rate over the first vs the last 10% of calls (both encodings)",
    `${int(tenth(0, result.calls * 0.1))} → ${
      int(tenth(result.calls * 0.9, Infinity))
    } tool calls/s (${order === "time" ? "actors' exports in time order" : "actor by actor"})`,
  );
  const cpu = (s: IngestResult["json"]) => (s.serverCpuMs * 1000) / s.calls;
  report.add(
    "Ingest",
    `server CPU per tool call while ingesting (all threads${
      store.engine === "postgres" ? " of the server process; PostgreSQL's own below" : ""
    })`,
    `JSON ${cpu(result.json).toFixed(0)} µs, protobuf ${cpu(result.protobuf).toFixed(0)} µs; ${
      ((result.json.serverCpuMs + result.protobuf.serverCpuMs) / both).toFixed(2)
    } cores busy`,
  );
  const byThread = (s: IngestResult["json"]) =>
    [...s.threadCpuMs].filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => `${name} ${((ms * 1000) / s.calls).toFixed(0)}`).join(", ");
  report.add(
    "Ingest",
    "server CPU per tool call by thread, µs (deno: main; worker-1: the SQLite writer; worker-2…: readers and checkpoints)",
    `JSON: ${byThread(result.json)}; protobuf: ${byThread(result.protobuf)}`,
  );
  const decode = measureDecode({
    records: 20_000,
    rounds: 5,
    seed: GENERATOR.seed,
    now: new Date(),
  });
  report.add(
    "Ingest",
    `main thread's work per OTLP log record, measured alone in the bench process (best of 5 over ${
      int(decode.json.records)
    } records)`,
    (["json", "protobuf"] as const).map((encoding) =>
      `${encoding === "json" ? "JSON" : "protobuf"}: decode ${
        decode[encoding].decodeUs.toFixed(1)
      } µs, decode and map ${decode[encoding].decodeAndMapUs.toFixed(1)} µs`
    ).join("; "),
    { text: "decode ≤ 10 µs", met: decode.json.decodeUs <= 10 && decode.protobuf.decodeUs <= 10 },
  );
  if (store.engine === "postgres") {
    const storeCpu = (s: IngestResult["json"]) => (s.storeCpuMs! * 1000) / s.calls;
    report.add(
      "Ingest",
      "PostgreSQL CPU per tool call while ingesting (this database's backends; WAL writer, checkpointer and background writer not included)",
      result.json.storeCpuMs === null || result.protobuf.storeCpuMs === null
        ? "not measured (the PostgreSQL server's processes are not readable from here)"
        : `JSON ${storeCpu(result.json).toFixed(0)} µs, protobuf ${
          storeCpu(result.protobuf).toFixed(0)
        } µs; ${
          ((result.json.storeCpuMs + result.protobuf.storeCpuMs) / both).toFixed(2)
        } cores busy`,
    );
  }
  report.add(
    "Ingest",
    "bench process CPU per tool call while sending (HTTP client)",
    `${
      (((result.json.clientCpuMs + result.protobuf.clientCpuMs) * 1000) / result.calls).toFixed(0)
    } µs`,
  );
  const rate = (calls: number, msTaken: number) => `${int((calls / msTaken) * 1000)} calls/s`;
  report.add(
    "Ingest",
    "body generation and encoding in the bench process (clock stopped, not in the rates above)",
    `generate ${rate(result.calls, result.generateMs)}; encode JSON ${
      rate(result.json.calls, result.encodeMs.json)
    }, protobuf ${rate(result.protobuf.calls, result.encodeMs.protobuf)}`,
  );
  report.add(
    "Ingest",
    "tool calls stored (SELECT count(*) FROM tool_calls)",
    `${int(stored)}, all sent`,
  );
  if (catchUpNote) {
    // Recorded here so the Replica rows follow the ingest rows.
    report.add(
      "Replica",
      `in the server at the end of ingest (the replica follows the writes, ${
        FOLLOW_MS / 1000
      } s behind)`,
      catchUpNote,
    );
  }
  // The last chunk arrived after that catch-up: the next insight copies just it.
  const seqAfter = await store.seq();
  const rows = await store.rowsInSeqRange(seqBefore, seqAfter);
  const last = result.chunks.at(-1)!;
  const url = `${server.queryUrl}/v1/insights/activity?window=90d`;
  // A catch-up of more than 100,000 rows counts as a build and answers 503 meanwhile:
  // the time to the first 200 is the catch-up's either way.
  const catchUpStarted = performance.now();
  await insightsAnswered(server, apiKeyOf(), "90d", 50);
  const withCatchUp = performance.now() - catchUpStarted;
  const without: number[] = [];
  for (let i = 0; i < 5; i++) without.push(await timedGet(url, apiKeyOf()));
  const catchUpMs = Math.max(0.001, withCatchUp - percentile(without, 50));
  report.add(
    "Replica",
    `incremental catch-up in the server: the last chunk (${int(last.calls)} calls)`,
    `${int(rows)} rows in ${ms(catchUpMs)} = ${
      int((rows / catchUpMs) * 1000)
    } rows/s (insight with catch-up ${ms(withCatchUp)} − without ${ms(percentile(without, 50))})`,
  );
  return result;
}

/** Server peak RSS by phase: VmHWM (reset between phases) and the largest 0.5 s sample. */
const rssPhases: { name: string; peak: number; sample: RssSample }[] = [];
let rssCurrent: { name: string; sampler: { stop(): Promise<RssSample> } } | null = null;

/** Ends the current RSS phase (if any) and starts `next` (if any). */
async function rssPhase(server: BenchServer, next: string | null): Promise<void> {
  if (rssCurrent) {
    const peak = await server.peakRss();
    const sample = await rssCurrent.sampler.stop();
    rssPhases.push({ name: rssCurrent.name, peak, sample });
  }
  await server.resetPeakRss();
  rssCurrent = next === null ? null : { name: next, sampler: server.sampleRss() };
}

/** The RSS figures: the peak over every phase, then each phase's. */
function reportRss(rssAtEnd: number): void {
  if (rssPhases.length === 0) return;
  const peak = Math.max(...rssPhases.map((p) => p.peak));
  report.add(
    "Footprint",
    "server peak RSS (VmHWM) over the whole run",
    `${bytes(peak)} (RSS at the end of the HTTP phases ${bytes(rssAtEnd)})`,
    { text: "≤ 512 MiB (target at 10M)", met: peak <= 512 * 2 ** 20 },
  );
  for (const phase of rssPhases) {
    const s = phase.sample;
    report.add(
      "Footprint",
      `server peak RSS during ${phase.name}`,
      `${bytes(phase.peak)} (largest 0.5 s sample: anon ${bytes(s.anon)} + file ${
        bytes(s.file)
      } + shmem ${bytes(s.shmem)})`,
    );
  }
}

/** A latency run plus the server's own durations of its requests, from its request log. */
async function measured(
  server: BenchServer,
  url: () => string,
  apiKey: string,
  options: Parameters<typeof latencyRun>[2],
) {
  const offset = await server.logOffset();
  const run = await latencyRun(url, apiKey, options);
  run.server = await server.loggedDurations(offset);
  return run;
}

let currentApiKey = "";
const apiKeyOf = () => currentApiKey;

/**
 * Waits until an insight answers 200: a replica being built (or rebuilt on a
 * reused directory) answers a retryable 503, or 500 past the query limit.
 */
async function insightsAnswered(
  server: BenchServer,
  apiKey: string,
  window: WindowName = "7d",
  retryMs = 500,
): Promise<void> {
  const url = `${server.queryUrl}/v1/insights/activity?window=${window}`;
  const deadline = performance.now() + 3_600_000;
  for (;;) {
    const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
    const text = await response.text();
    if (response.status === 200) return;
    if ((response.status !== 503 && response.status !== 500) || performance.now() > deadline) {
      throw new Error(`GET ${url}: ${response.status} ${text}`);
    }
    server.assertAlive();
    await new Promise((resolve) => setTimeout(resolve, retryMs));
  }
}

/** How far behind the writes the replica is when ingest stops, and the first insight's wait. */
async function endOfIngestCatchUp(server: BenchServer): Promise<string> {
  const lag = await replicaLag(server);
  const started = performance.now();
  await insightsAnswered(server, apiKeyOf(), "90d", 50);
  return `${
    int(lag)
  } seqs not yet copied when the last export was acknowledged; the first insight (activity 90d) answered 200 after ${
    ms(performance.now() - started)
  }`;
}

async function replicaLag(server: BenchServer): Promise<number> {
  const metrics = await fetch(`${server.ingestUrl}/metrics`).then((r) => r.text());
  const lag = Number(/^agent_telemetry_replica_lag_seq\S* (\d+)/m.exec(metrics)?.[1] ?? NaN);
  if (Number.isNaN(lag)) throw new Error("No replica lag in /metrics");
  return lag;
}

/**
 * Asks a server that is building its replica for an insight and waits until
 * the replica holds every row.
 */
async function fullCatchUp(server: BenchServer, store: BenchStore, seq: number): Promise<string> {
  const logBefore = (await Deno.readTextFile(server.logPath)).length;
  const started = performance.now();
  const url = `${server.queryUrl}/v1/insights/activity?window=90d`;
  const first = await fetch(url, { headers: { authorization: `Bearer ${apiKeyOf()}` } });
  const firstText = await first.text();
  let timedOut = "";
  if (first.status !== 200) {
    if (first.status !== 500 && first.status !== 503) {
      throw new Error(`GET ${url}: ${first.status} ${firstText}`);
    }
    // 503: the replica is being built (retryable); 500: the catch-up outlived the query time
    // limit. Either way it goes on in the background.
    timedOut = ` — the first insight request got ${first.status} after ${
      ms(performance.now() - started)
    } (${
      first.status === 503 ? "replica being built" : "query time limit"
    }) while the catch-up went on`;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (await replicaLag(server) === 0) break;
      server.assertAlive();
    }
    // Every row is copied; a first build still sorts them (503 meanwhile).
    await insightsAnswered(server, apiKeyOf(), "90d", 50);
  }
  const answeredMs = performance.now() - started;
  // The server logs its initial build: rows, ms and rows/s (the log file trails a little).
  let line: string | undefined;
  for (let wait = 0; wait < 40 && line === undefined; wait++) {
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const log = (await Deno.readTextFile(server.logPath)).slice(logBefore);
    line = log.split("\n").find((l) => l.includes('"analytics replica: up to date"'));
  }
  if (line) {
    const entry = JSON.parse(line) as { rows: number; ms: number; seq: number };
    if (entry.seq !== seq) notes.push(`Replica catch-up logged seq ${entry.seq}, expected ${seq}.`);
    return `${int(entry.rows)} rows in ${ms(entry.ms)} = ${
      int((entry.rows / entry.ms) * 1000)
    } rows/s (server log); first insight answered after ${ms(answeredMs)}${timedOut}`;
  }
  // No figures logged (a catch-up over fewer seqs than the server's threshold that is not its
  // first build): the rows it copied are every row so far; the rate is a lower bound.
  const rows = await store.rowsInSeqRange(0, seq);
  return `${int(rows)} rows (counted in the store) with the first insight answered after ${
    ms(answeredMs)
  } = ≥ ${int((rows / answeredMs) * 1000)} rows/s (no figures in the server log)${timedOut}`;
}

/** The lists the bench measures: `[name in the report, path]`. */
function listMix(actorId: string): [string, string][] {
  const iso = (daysAgo: number) =>
    encodeURIComponent(new Date(Date.now() - daysAgo * DAY).toISOString());
  return [
    ["/v1/sessions", "/v1/sessions"],
    ["/v1/sessions?after=(7 days ago)", `/v1/sessions?after=${iso(7)}`],
    ["/v1/sessions?actor=(one actor)", `/v1/sessions?actor=${actorId}`],
    ["/v1/tool-calls", "/v1/tool-calls"],
    ["/v1/tool-calls?tool_name=Bash&outcome=error", "/v1/tool-calls?tool_name=Bash&outcome=error"],
    ["/v1/tool-calls?outcome=rejected", "/v1/tool-calls?outcome=rejected"],
    [
      "/v1/tool-calls?after=(30 days ago)&before=(7 days ago)",
      `/v1/tool-calls?after=${iso(30)}&before=${iso(7)}`,
    ],
  ];
}

/**
 * Session lists by agent, team and domain (issue #16): the session_actors
 * rollup's filters besides `actor`. The domain is the generator's least
 * reached (~15% of sessions), the hardest for the domain's walk.
 */
function sessionFilterLists(actorIds: readonly string[]): [string, string][] {
  return [
    ["/v1/sessions?agent=claude-code", "/v1/sessions?agent=claude-code"],
    ["/v1/sessions?team=(three actors)", `/v1/sessions?team=${actorIds.slice(0, 3).join(",")}`],
    ["/v1/sessions?domain=docs.python.org", "/v1/sessions?domain=docs.python.org"],
  ];
}

async function listPhase(
  server: BenchServer,
  apiKey: string,
  actorIds: readonly string[],
  listTargets: boolean,
) {
  const actorId = actorIds[0]!;
  const base = server.queryUrl;
  for (const [name, path] of [...listMix(actorId), ...sessionFilterLists(actorIds)]) {
    progress(`list ${name}`);
    for (let i = 0; i < 5; i++) await timedGet(`${base}${path}`, apiKey);
    const one = await measured(server, () => `${base}${path}`, apiKey, {
      concurrency: 1,
      samples: budget.listSamples,
      budgetMs: budget.listBudgetMs,
    });
    const p99 = percentile(one.samples, 99);
    report.add(
      "Lists",
      `${name} (default limit), concurrency 1`,
      describeRun(one),
      listTargets
        ? {
          text: "p99 ≤ 10 ms (target at 10M)",
          met: p99 <= 10 && Object.keys(one.failures).length === 0,
        }
        : undefined,
    );
    const sixteen = await measured(server, () => `${base}${path}`, apiKey, {
      concurrency: 16,
      samples: budget.listConcurrentSamples,
      budgetMs: budget.listBudgetMs,
    });
    report.add("Lists", `${name} (default limit), concurrency 16`, describeRun(sixteen));
  }
  await pageWalk(server, apiKey, "/v1/tool-calls", 50, (row: { id: string }) => row.id);
  await pageWalk(
    server,
    apiKey,
    "/v1/sessions",
    20,
    (row: { session_id: string }) => row.session_id,
  );
}

/** Page 1 against page 1,000 (or the deepest page there is) of one walk. */
async function pageWalk<R>(
  server: BenchServer,
  apiKey: string,
  path: string,
  limit: number,
  idOf: (row: R) => string,
) {
  progress(`page walk ${path}?limit=${limit}`);
  let cursor: string | undefined;
  let page = 1;
  const seen = new Set<string>();
  for (; page < 1000; page++) {
    const body = await getJson<{ data: R[]; next_cursor?: string }>(
      `${server.queryUrl}${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
      apiKey,
    );
    for (const row of body.data) {
      const id = idOf(row);
      if (seen.has(id)) throw new Error(`${path}: page ${page} repeats ${id}`);
      seen.add(id);
    }
    if (!body.next_cursor) break;
    cursor = body.next_cursor;
  }
  if (!cursor) {
    report.add("Lists", `${path}?limit=${limit} walk`, "a single page: nothing to compare");
    return;
  }
  const deepPage = page;
  const first: number[] = [];
  const deep: number[] = [];
  const firstUrl = `${server.queryUrl}${path}?limit=${limit}`;
  const deepUrl = `${firstUrl}&cursor=${cursor}`;
  for (let i = 0; i < 3; i++) {
    await timedGet(firstUrl, apiKey);
    await timedGet(deepUrl, apiKey);
  }
  for (let i = 0; i < budget.pageSamples; i++) {
    first.push(await timedGet(firstUrl, apiKey));
    deep.push(await timedGet(deepUrl, apiKey));
  }
  const ratio = percentile(deep, 50) / percentile(first, 50);
  report.add(
    "Lists",
    `${path}?limit=${limit}: page 1 vs page ${int(deepPage)} of the same walk (p50)`,
    `page 1 p50 ${ms(percentile(first, 50))} (p99 ${ms(percentile(first, 99))}); page ${
      int(deepPage)
    } p50 ${ms(percentile(deep, 50))} (p99 ${ms(percentile(deep, 99))}); ${times(ratio)}`,
    {
      text: "page 1,000 ≤ 1.5× page 1 (target at 10M)",
      met: deepPage >= 1000 ? ratio <= 1.5 : null,
    },
  );
}

async function detailPhase(server: BenchServer, apiKey: string, store: BenchStore) {
  // Ids spread over the whole data set.
  const sampled = await store.sampleCalls(500);
  const calls = sampled.map((c) => c.id);
  const sessions = sampled.map((c) => c.sessionId);
  if (calls.length === 0) throw new Error("No tool calls to look up");
  let i = 0;
  const details: [string, () => string][] = [
    [
      "/v1/sessions/{id}",
      () =>
        `${server.queryUrl}/v1/sessions/${encodeURIComponent(sessions[i++ % sessions.length]!)}`,
    ],
    ["/v1/tool-calls/{id}", () => `${server.queryUrl}/v1/tool-calls/${calls[i++ % calls.length]}`],
  ];
  for (const [name, url] of details) {
    progress(`detail ${name}`);
    for (let k = 0; k < 5; k++) await timedGet(url(), apiKey);
    for (const concurrency of [1, 16]) {
      const run = await measured(server, url, apiKey, {
        concurrency,
        samples: budget.detailSamples,
        budgetMs: budget.listBudgetMs,
      });
      report.add(
        "Details",
        `${name} (random ids), concurrency ${concurrency}`,
        describeRun(run),
      );
    }
  }
}

/**
 * Every tool call over HTTP as NDJSON (`GET /v1/export/tool-calls`), read
 * whole by one client that counts its lines: the time to the last byte, the
 * rate, and the server's peak RSS during it (VmHWM, reset when the phase
 * began) beside its RSS before, so that memory growing with the export
 * would show.
 */
async function exportPhase(server: BenchServer, apiKey: string, stored: number): Promise<void> {
  progress(`export of ${int(stored)} tool calls over HTTP`);
  const rssBefore = await server.rss();
  const started = performance.now();
  const response = await fetch(`${server.queryUrl}/v1/export/tool-calls`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  if (response.status !== 200) {
    throw new Error(`GET /v1/export/tool-calls: ${response.status} ${await response.text()}`);
  }
  let firstByteMs = NaN;
  let size = 0;
  let lines = 0;
  for await (const chunk of response.body!) {
    if (size === 0) firstByteMs = performance.now() - started;
    size += chunk.length;
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
  }
  const tookMs = performance.now() - started;
  const peak = await server.peakRss();
  if (lines !== stored) throw new Error(`The export had ${lines} lines for ${stored} tool calls`);
  report.add(
    "Export",
    "GET /v1/export/tool-calls: every tool call as NDJSON over HTTP, one client; server peak RSS during it",
    `${int((lines / tookMs) * 1000)} calls/s (${int(lines)} calls in ${
      (tookMs / 1000).toFixed(1)
    } s, ${bytes(size)}, ${int(size / lines)} B/call, first byte after ${
      ms(firstByteMs)
    }); peak RSS ${bytes(peak)} (${bytes(rssBefore)} before)`,
  );
}

/**
 * Insight timings by `name window`: over HTTP after new data (a cache miss:
 * the replica catches up one small export, then computes) and repeated (a
 * cache hit), then in-process ones.
 */
const insightTimes = new Map<
  string,
  {
    http: number[];
    httpCached: number[];
    duck: number[];
    baseline: number[];
    baselineCapped?: "capped" | "skipped";
  }
>();
const insightKey = (name: InsightName, window: WindowName) => `${name} ${window}`;

/**
 * Each insight over HTTP, twice: right after a small export was acknowledged
 * (the answer must include it, so the cache cannot serve it: what a
 * dashboard on live data gets), and repeated with nothing new (the cache).
 * Without ingest keys (a reused directory run with --mixed or --metrics only)
 * only the repeated figure is taken.
 */
async function insightHttpPhase(
  server: BenchServer,
  apiKey: string,
  ingestKeys: readonly string[],
) {
  const newData = ingestKeys.length === 0
    ? null
    : generatedIngest({ ingestKeys, seed: 7, now: new Date() });
  for (const name of INSIGHT_NAMES) {
    progress(`insight ${name} over HTTP`);
    for (const window of WINDOWS) {
      const url = `${server.queryUrl}/v1/insights/${name}?window=${window}`;
      await timedGet(url, apiKey);
      const http: number[] = [];
      const httpCached: number[] = [];
      for (let i = 0; i < budget.insightRuns; i++) {
        if (newData !== null) {
          await postExport(server, newData(Math.random));
          http.push(await timedGet(url, apiKey));
        }
        httpCached.push(await timedGet(url, apiKey));
      }
      insightTimes.set(insightKey(name, window), { http, httpCached, duck: [], baseline: [] });
    }
  }
}

/** Sends one generated export to the ingest listener; throws unless it is acknowledged. */
async function postExport(
  server: BenchServer,
  request: ReturnType<MixedRequests["ingest"]>,
): Promise<void> {
  const response = await sendExport(server.ingestUrl, request);
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`POST ${request.path}: ${response.status}`);
}

/** Where the baseline runs, for the report: SQLite in the bench process, PostgreSQL on its own. */
const baselineWhere = (store: BenchStore) => store.engine === "sqlite" ? "in-process" : "direct";

async function insightInProcessPhase(analytics: Analytics, store: BenchStore, orgId: string) {
  const capped = new Set<InsightName>();
  const baseline = store.insightBaseline(baselineCapMs);
  try {
    for (const name of INSIGHT_NAMES) {
      progress(`insight ${name}: DuckDB in-process and ${store.label} ${baselineWhere(store)}`);
      for (const window of WINDOWS) {
        const entry = insightTimes.get(insightKey(name, window)) ??
          { http: [], httpCached: [], duck: [], baseline: [] };
        insightTimes.set(insightKey(name, window), entry);
        // Same rows, same window: the two engines must give the same body.
        const same = insightWindow(window, "daily", Date.now());
        const duckBody = await analytics.insight(name, orgId, same);
        for (let i = 0; i < budget.insightRuns; i++) {
          const started = performance.now();
          await analytics.insight(name, orgId, insightWindow(window, "daily", Date.now()));
          entry.duck.push(performance.now() - started);
        }
        if (capped.has(name)) {
          entry.baselineCapped = "skipped";
          continue;
        }
        for (let i = 0; i < budget.baselineRuns; i++) {
          const answer = await baseline.run(
            name,
            orgId,
            i === 0 ? same : insightWindow(window, "daily", Date.now()),
            i === 0,
          );
          if (answer === null) {
            // Past the cap: longer windows of this insight would be too.
            entry.baselineCapped = "capped";
            capped.add(name);
            break;
          }
          entry.baseline.push(answer.ms);
          const difference = i === 0 ? firstDifference(duckBody, answer.body, "") : null;
          if (difference !== null) {
            notes.push(
              `${name} ${window}: DuckDB and ${store.label} answer differently over the same window and rows: ${difference}`,
            );
          }
        }
      }
    }
  } finally {
    // The baseline's PostgreSQL backend goes with its connection: read its CPU first.
    await store.cpuMs().catch(() => null);
    await baseline.stop();
  }
}

/** Where two insight bodies differ (numbers within 1e-9 relative), or null. */
function firstDifference(a: unknown, b: unknown, path: string): string | null {
  if (typeof a === "number" && typeof b === "number") {
    return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))
      ? null
      : `${path}: ${a} vs ${b}`;
  }
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    return a === b ? null : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const found = firstDifference(
      (a as Record<string, unknown>)[key],
      (b as Record<string, unknown>)[key],
      `${path}.${key}`,
    );
    if (found !== null) return found;
  }
  return null;
}

function reportInsights(store: BenchStore) {
  const base = store.label;
  const rows: string[] = [
    `| Insight | Window | over HTTP after new data p50 (max) | over HTTP repeated (cache) p50 | DuckDB in-process p50 | ${base} ${
      baselineWhere(store)
    } p50 | ${base} ÷ DuckDB in-process | ${base} ÷ DuckDB over HTTP after new data |`,
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  let slowest = { key: "", p50: 0 };
  let slowestWeek = { key: "", p50: 0 };
  let weakest = { key: "", ratio: Infinity, httpRatio: Infinity };
  for (const name of INSIGHT_NAMES) {
    for (const window of WINDOWS) {
      const key = insightKey(name, window);
      const t = insightTimes.get(key);
      if (!t) continue;
      const http = t.http.length > 0 ? percentile(t.http, 50) : NaN;
      const cached = percentile(t.httpCached, 50);
      const duck = percentile(t.duck, 50);
      // A baseline stopped at the cap (or skipped after a shorter window was) is a lower bound.
      const bound = t.baselineCapped !== undefined;
      const lite = bound ? baselineCapMs : percentile(t.baseline, 50);
      const over = bound ? "≥ " : "";
      const liteText = t.baselineCapped === "capped"
        ? `> ${ms(baselineCapMs)} (stopped)`
        : t.baselineCapped === "skipped"
        ? `> ${ms(baselineCapMs)} (not run: a shorter window passed the cap)`
        : ms(lite);
      // The server answers some insights from SQLite itself (SQLITE_ROUTES), not the replica.
      const routed = store.engine === "sqlite" && (SQLITE_ROUTES[name]?.includes(window) ?? false);
      const httpText = Number.isNaN(http)
        ? "not measured (reused directory: no ingest key)"
        : `${ms(http)} (${ms(Math.max(...t.http))})${routed ? " SQLite-routed" : ""}`;
      rows.push(
        `| ${name} | ${window} | ${httpText} | ${ms(cached)} | ${ms(duck)} | ${liteText} | ${over}${
          times(lite / duck)
        } | ${Number.isNaN(http) ? "" : `${over}${times(lite / http)}`} |`,
      );
      if (Number.isNaN(http)) continue;
      if (window === "90d") {
        if (http > slowest.p50) slowest = { key, p50: http };
        if (lite / duck < weakest.ratio) {
          weakest = { key, ratio: lite / duck, httpRatio: lite / http };
        }
      }
      if (window === "7d" && http > slowestWeek.p50) slowestWeek = { key, p50: http };
    }
  }
  const about = (store.engine === "sqlite" ? "" : "PostgreSQL direct: the same insight in " +
    "PostgreSQL's SQL (`sql/insights/postgres/`) sent by the bench process on its own " +
    "connection, statements pipelined in one read-only snapshot as the server's reads are; " +
    "DuckDB in-process: a replica rebuilt from this database. ") +
    "Over HTTP after new data (the server's own engine choice: DuckDB, or SQLite where marked " +
    "SQLite-routed): each sample follows an acknowledged export of " +
    `${MIXED_INGEST_RECORDS} records, so the replica catches it up and the insight is computed ` +
    "(never a cache hit); repeated: the same request again with nothing new (a cache hit).\n\n";
  sections.push(`## Insights\n\n${about}${rows.join("\n")}`);
  if (slowest.key) {
    report.add(
      "Insights",
      "slowest 90d insight over HTTP after new data p50",
      `${ms(slowest.p50)} (${slowest.key}; all 18 in the Insights table)`,
      { text: "each 90d ≤ 100 ms p50 (target at 10M)", met: slowest.p50 <= 100 },
    );
  }
  if (slowestWeek.key) {
    report.add(
      "Insights",
      "slowest 7d insight over HTTP after new data p50",
      `${ms(slowestWeek.p50)} (${slowestWeek.key})`,
      { text: "each 7d ≤ 10 ms p50 (target at 1M)", met: slowestWeek.p50 <= 10 },
    );
  }
  if (Number.isFinite(weakest.ratio)) {
    // The 10× target is DuckDB's reason to exist beside SQLite; on PostgreSQL the ratio is shown.
    report.add(
      "Insights",
      store.engine === "sqlite"
        ? "smallest SQLite ÷ DuckDB ratio over 90d, both in-process"
        : "smallest PostgreSQL ÷ DuckDB ratio over 90d (PostgreSQL directly, DuckDB in-process)",
      `${times(weakest.ratio)} (${weakest.key}; ${
        times(weakest.httpRatio)
      } against DuckDB over HTTP)`,
      store.engine === "sqlite"
        ? { text: "each 90d ≥ 10× (target at 1M)", met: weakest.ratio >= 10 }
        : undefined,
    );
  }
}

/** Actors with ingest keys for the metrics and mixed phases, made before their server starts. */
async function createPhaseActors(
  dir: string,
  databaseUrl: string | null,
  orgId: string,
  count: number,
): Promise<string[]> {
  const keys = await openKeyStoreFor(dir, databaseUrl);
  try {
    const tag = Date.now().toString(36);
    const created: string[] = [];
    for (let i = 0; i < count; i++) {
      created.push((await keys.createActor(orgId, `bench-${tag}-${i}`)).ingest_key);
    }
    return created;
  } finally {
    await keys.close();
  }
}

/**
 * Retention of the oldest day or two under ingest: the server restarts with
 * `--retention-days` set so that its first pass (10 s after start) deletes
 * everything older than the oldest call's day + 1 to 2 days, while 4
 * connections keep sending small exports; returns the new server.
 */
async function retentionPhase(
  previous: BenchServer,
  store: BenchStore,
  ingestKeys: readonly string[],
  stopServer: (server: BenchServer) => Promise<void>,
  apiKey: string,
  dir: string,
): Promise<BenchServer> {
  const oldest = await store.oldestCallTs();
  const days = oldest === null ? 0 : Math.floor((Date.now() - oldest) / DAY) - 1;
  if (days < 90) {
    notes.push(`Retention phase skipped: the data spans ${days + 1} days, retention takes ≥ 90.`);
    return previous;
  }
  await rssPhase(previous, null);
  await stopServer(previous);
  const logPath = newLogPath();
  const callsBefore = await store.toolCalls();
  progress(`retention: --retention-days ${days} over ${int(callsBefore)} tool calls, under ingest`);
  const server = await BenchServer.start(dir, {
    apiKey,
    logPath,
    serveArgs: [...store.serveArgs, "--retention-days", String(days)],
  });
  await rssPhase(server, "retention under ingest");
  const run = await ingestDuringRetention({
    ingestUrl: server.ingestUrl,
    logPath,
    ingest: generatedIngest({ ingestKeys, seed: (Date.now() >>> 0) + 1, now: new Date() }),
    concurrency: 4,
    timeoutMs: 600_000,
  });
  const { pass } = run;
  const rows = pass.deletedToolCalls + pass.deletedModelCalls;
  report.add(
    "Retention",
    `first pass with --retention-days ${days} (the oldest 1–2 days), 4 connections of ${MIXED_INGEST_RECORDS}-record exports meanwhile`,
    `${int(pass.deletedToolCalls)} tool calls + ${int(pass.deletedModelCalls)} model calls in ${
      ms(pass.durationMs)
    } = ${int((pass.deletedToolCalls / pass.durationMs) * 1000)} tool calls/s (${
      int((rows / pass.durationMs) * 1000)
    } rows/s); ${bytes(pass.reclaimedBytes)} returned to the file system`,
  );
  const errors = Object.entries(run.errors).map(([cause, n]) => `${n} × ${cause}`).join(", ");
  report.add(
    "Retention",
    "ingest latency during the pass (requests overlapping it) and outside it",
    `during: p50 ${ms(percentile(run.duringPass, 50))}, p99 ${
      ms(percentile(run.duringPass, 99))
    }, max ${ms(Math.max(0, ...run.duringPass))} (n=${run.duringPass.length}); outside: p50 ${
      ms(percentile(run.outsidePass, 50))
    }, p99 ${ms(percentile(run.outsidePass, 99))} (n=${run.outsidePass.length})${
      errors ? `; failed: ${errors}` : ""
    }`,
  );
  report.add(
    "Retention",
    "a day of a 100M store (250,000 calls) at this pass's rate (issue #31: ≤ 10 s)",
    `${ms((250_000 / pass.deletedToolCalls) * pass.durationMs)} (extrapolated, linear)`,
  );
  await rssPhase(server, null);
  return server;
}

/** Points per metrics export: 8 agent sessions' interval (≈ 12 points each). */
const METRICS_SESSIONS_PER_REQUEST = 8;

async function metricsPhase(
  server: BenchServer,
  store: BenchStore,
  ingestKeys: readonly string[],
  serverCpuMs: () => Promise<number>,
) {
  progress("metrics ingest: Claude-like delta and Gemini-like cumulative sums");
  const before = await store.metricPoints();
  const result = await metricsIngest({
    server,
    ingestKeys,
    seed: Date.now() >>> 0,
    now: new Date(),
    sessionsPerRequest: METRICS_SESSIONS_PER_REQUEST,
    chunkRequests: 100,
    concurrency: ingestConcurrency,
    budgetMs: budget.metricsMs,
    serverCpuMs,
  });
  const sent = result.json.points + result.protobuf.points;
  const stored = await store.metricPoints() - before;
  if (stored !== sent) throw new Error(`Sent ${sent} metric points but ${stored} were stored`);
  for (const encoding of ["json", "protobuf"] as const) {
    const s = result[encoding];
    report.add(
      "Metrics",
      `${encoding === "json" ? "JSON" : "protobuf"} POST /v1/metrics, ${
        int(s.points / s.requests)
      } points per request (Claude delta and Gemini cumulative sums)`,
      `${int((s.points / s.ms) * 1000)} points/s (${int(s.points)} points in ${
        int(s.requests)
      } requests, ${(s.ms / 1000).toFixed(1)} s; ${int(s.bytes / s.points)} B/point)`,
    );
  }
  const cpu = (s: typeof result.json) => ((s.serverCpuMs * 1000) / s.points).toFixed(1);
  const sendingMs = result.json.ms + result.protobuf.ms;
  report.add(
    "Metrics",
    `server CPU per point while ingesting (all threads${
      store.engine === "postgres" ? ", PostgreSQL's backends included" : ""
    })`,
    `JSON ${cpu(result.json)} µs, protobuf ${cpu(result.protobuf)} µs; ${
      ((result.json.serverCpuMs + result.protobuf.serverCpuMs) / sendingMs).toFixed(2)
    } cores busy; bench process ${
      (((result.json.clientCpuMs + result.protobuf.clientCpuMs) * 1000) / sent).toFixed(1)
    } µs per point`,
  );
  report.add(
    "Metrics",
    "metric points stored (SELECT count(*) FROM metric_points, after − before)",
    `${int(stored)}, all sent`,
  );
}

async function mixedPhase(
  server: BenchServer,
  store: BenchStore,
  apiKey: string,
  actorId: string,
  ingestKeys: readonly string[],
  serverCpuMs: () => Promise<number>,
) {
  const lists = listMix(actorId);
  const sampled = await store.sampleCalls(500);
  if (sampled.length === 0) throw new Error("No tool calls to look up");
  const insights = INSIGHT_NAMES.flatMap((name) => WINDOWS.map((window) => ({ name, window })));
  const pick = <T>(items: readonly T[], random: () => number) =>
    items[Math.floor(random() * items.length)]!;
  const requests: MixedRequests = {
    list: (random) => {
      const [kind, path] = pick(lists, random);
      return { kind, path };
    },
    detail: (random) => {
      const call = pick(sampled, random);
      return random() < 0.5
        ? { kind: "/v1/sessions/{id}", path: `/v1/sessions/${encodeURIComponent(call.sessionId)}` }
        : { kind: "/v1/tool-calls/{id}", path: `/v1/tool-calls/${call.id}` };
    },
    insight: (random) => {
      const { name, window } = pick(insights, random);
      return { kind: `${name} ${window}`, path: `/v1/insights/${name}?window=${window}` };
    },
    ingest: generatedIngest({ ingestKeys, seed: Date.now() >>> 0, now: new Date() }),
  };
  const callsBefore = await store.toolCalls();
  progress(
    `mixed load: ${mixedConnections} connections for ${mixedSeconds} s over ${
      int(callsBefore)
    } tool calls`,
  );
  const load = new OtherLoad();
  const serverCpuBefore = await serverCpuMs();
  const threadsBefore = await server.threadCpuMs();
  await load.start(serverCpuBefore);
  const result = await mixedLoad({
    queryUrl: server.queryUrl,
    ingestUrl: server.ingestUrl,
    apiKey,
    connections: mixedConnections,
    durationMs: mixedSeconds * 1000,
    requests,
    seed: 16,
  });
  const serverCpuAfter = await serverCpuMs();
  const threadsAfter = await server.threadCpuMs();
  const others = await load.stop(serverCpuAfter);
  server.assertAlive();
  const rssEnd = await server.rss();
  const seconds = result.ms / 1000;
  const classes = Object.entries(result.classes) as [MixedClass, ClassStats][];
  const answered = classes.reduce((n, [, c]) => n + c.samples.length, 0);
  const count = (record: Record<string, number>) =>
    Object.values(record).reduce((a, b) => a + b, 0);
  const serverErrors = classes.reduce((n, [, c]) => n + count(c.serverErrors), 0);
  const errors = classes.reduce((n, [, c]) => n + count(c.errors), 0);
  if (answered === 0) throw new Error(`Mixed load: no request answered 2xx`);
  const rps = answered / seconds;
  const where = `${mixedConnections} connections, ${mixedSeconds} s`;
  report.add(
    "Mixed",
    `requests answered 2xx per second, all classes (${where}; 40% lists, 20% details, 20% insights, 20% ingest)`,
    `${int(rps)} req/s (${int(answered)} in ${
      seconds.toFixed(1)
    } s; sockets open: ${result.sockets.query} to the query listener, ${result.sockets.ingest} to the ingest listener)`,
    { text: "≥ 1,000 req/s", met: rps >= 1000 },
  );
  const goals: Partial<Record<MixedClass, number>> = { list: 100, insight: 500 };
  for (const [name, stats] of classes) {
    const p99 = percentile(stats.samples, 99);
    const goal = goals[name];
    const failed = Object.entries(stats.serverErrors).map(([status, n]) => `${n} × ${status}`)
      .concat(Object.entries(stats.errors).map(([cause, n]) => `${n} × ${cause}`));
    report.add(
      "Mixed",
      `${name === "ingest" ? "ingest" : `${name}s`} under the mixed load, p50 / p99`,
      `${ms(percentile(stats.samples, 50))} / ${ms(p99)} (n=${int(stats.samples.length)}, ${
        int(stats.samples.length / seconds)
      } req/s${name === "ingest" ? `; ${int(stats.items / seconds)} tool calls/s stored` : ""}${
        failed.length > 0 ? `; failed: ${failed.join(", ")}` : ""
      })`,
      goal === undefined ? undefined : { text: `p99 ≤ ${goal} ms`, met: p99 <= goal },
    );
  }
  report.add(
    "Mixed",
    "5xx answers and other errors (4xx, failed requests)",
    `${int(serverErrors)} × 5xx, ${int(errors)} errors`,
    { text: "zero 5xx", met: serverErrors === 0 },
  );
  report.add(
    "Mixed",
    "CPU during the mixed load (mean cores busy)",
    `server ${((serverCpuAfter - serverCpuBefore) / result.ms).toFixed(2)}${
      store.engine === "postgres" ? " (PostgreSQL's backends included)" : ""
    }; load generator (this process) ${
      (result.clientCpuMs / result.ms).toFixed(2)
    }; other processes ${others.others.toFixed(2)}; host steal ${others.steal.toFixed(2)}`,
  );
  report.add(
    "Mixed",
    "server CPU per answered request by thread, µs (deno: main, with the DuckDB calls it makes; worker-1: the SQLite writer; others: readers, checkpoints, DuckDB's and V8's own)",
    [...threadsAfter].map(([name, ms]) => [name, ms - (threadsBefore.get(name) ?? 0)] as const)
      .filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => `${name} ${((ms * 1000) / Math.max(1, answered)).toFixed(0)}`)
      .join(", "),
  );
  report.add("Mixed", "server RSS at the end of the mixed load", bytes(rssEnd));
  const generatorCores = result.clientCpuMs / result.ms;
  notes.push(
    `Mixed load: the load generator (this process) kept ${generatorCores.toFixed(2)} of the ` +
      `${navigator.hardwareConcurrency} cores busy (${
        ((result.clientCpuMs * 1000) / Math.max(1, answered)).toFixed(0)
      } µs of CPU per answered request), the server ${
        ((serverCpuAfter - serverCpuBefore) / result.ms).toFixed(2)
      }: the generator's share is CPU the server could not use.`,
  );

  const rows = classes.flatMap(([name, stats]) =>
    [...stats.byKind.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([kind, samples]) =>
      `| ${name} | ${kind.replaceAll("|", "\\|")} | ${int(samples.length)} | ${
        ms(percentile(samples, 50))
      } | ${ms(percentile(samples, 99))} | ${ms(Math.max(...samples))} |`
    )
  );
  sections.push(
    [
      "## Mixed load",
      "",
      `${where}, each connection a keep-alive client sending its next request when the previous ` +
      `is answered; classes drawn 40/20/20/20 per request; ingest bodies of ${MIXED_INGEST_RECORDS} ` +
      `log records (JSON and protobuf alternating) over ${
        int(callsBefore)
      } tool calls at the start. ` +
      "Latencies of the 2xx answers, by request:",
      "",
      "| Class | Request | n | p50 | p99 | max |",
      "| --- | --- | --- | --- | --- | --- |",
      ...rows,
    ].join("\n"),
  );
}

function detectionPhase() {
  const inputs: Parameters<typeof detectToolCall>[0][] = [];
  for (
    const batch of generateExports({
      actors: 2,
      days: 30,
      seed: 11,
      now: new Date(),
      batchRecords: 512,
    })
  ) {
    const { records } = decodeExport(encodeJson(batch.body), {
      encoding: "json",
      pathSignal: "logs",
    });
    for (const record of records) {
      const mapped = mapRecord(record);
      if (mapped.status !== "mapped") continue;
      for (const event of mapped.events) {
        if (event.kind !== "tool_call") continue;
        const e = event as ToolCallEvent;
        inputs.push({
          toolName: e.toolName,
          toolType: e.toolType,
          category: e.category,
          ...(e.arguments === undefined ? {} : { arguments: e.arguments }),
          ...(e.result === undefined ? {} : { result: e.result }),
        });
      }
    }
  }
  for (const input of inputs) detectToolCall(input, { redact: true });
  let findings = 0;
  for (const input of inputs) {
    const d = detectToolCall(input, { redact: true });
    if (d.flags.length + d.domains.length > 0) findings++;
  }
  const started = performance.now();
  let n = 0;
  while (performance.now() - started < budget.detectionMs) {
    for (const input of inputs) detectToolCall(input, { redact: true });
    n += inputs.length;
  }
  report.add(
    "Detection",
    "detectToolCall per tool call, gen.ts mix (in-process, redaction on)",
    `${(((performance.now() - started) * 1000) / n).toFixed(2)} µs (${int(inputs.length)} calls, ${
      ((findings / inputs.length) * 100).toFixed(1)
    }% with a flag or domain)`,
  );
}

// -------------------------------------------------------------------------------- run

async function gitCommit(): Promise<{ commit: string; dirty: string }> {
  const git = async (...gitArgs: string[]) => {
    try {
      const out = await new Deno.Command("git", {
        args: gitArgs,
        cwd: new URL("..", import.meta.url).pathname,
        stdout: "piped",
        stderr: "null",
      }).output();
      return out.success ? new TextDecoder().decode(out.stdout).trim() : "";
    } catch {
      return "";
    }
  };
  const commit = (await git("rev-parse", "--short", "HEAD")) || "unknown";
  const dirty = await git("status", "--porcelain", "--", "src", "sql", "main.ts", "deno.json");
  return { commit, dirty };
}

async function machine() {
  const cpuinfo = await Deno.readTextFile("/proc/cpuinfo").catch(() => "");
  const meminfo = await Deno.readTextFile("/proc/meminfo").catch(() => "");
  const cpu = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? "unknown";
  const mhz = /cpu MHz\s*:\s*([\d.]+)/.exec(cpuinfo)?.[1];
  const memGiB = Number(/MemTotal:\s+(\d+)/.exec(meminfo)?.[1] ?? 0) / 2 ** 20;
  return {
    cpu: `${navigator.hardwareConcurrency} × ${cpu}${
      mhz ? ` @ ${Number(mhz).toFixed(0)} MHz` : ""
    }`,
    memory: `${memGiB.toFixed(1)} GiB`,
    deno: Deno.version.deno,
    os: `${Deno.build.os} ${Deno.osRelease()}`,
  };
}

const workDir = await Deno.makeTempDir({ prefix: "agent-telemetry-bench-" });
let serverLogCount = 0;
const newLogPath = () => `${workDir}/server-${++serverLogCount}.log`;

/** A URL (or text holding one) fit to print: any password replaced by `***`. */
function withoutPassword(text: string): string {
  return text.replace(/(postgres(?:ql)?:\/\/[^:@/\s]+):[^@\s]+@/g, "$1:***@");
}

/** The store of this run, once known (dropped in cleanup when the run created it). */
let benchStore: BenchStore | null = null;

async function run(): Promise<{ text: string; calls: number; engine: string }> {
  const started = performance.now();
  const { commit, dirty } = await gitCommit();
  const host = await machine();
  const date = new Date().toISOString();

  let dir: string;
  let meta: BenchMeta;
  let ingestKeys: string[] = [];
  let targetCalls = requestedCalls;
  const carried: Figure[] = [];
  if (reuseDir) {
    dir = reuseDir;
    meta = JSON.parse(await Deno.readTextFile(`${dir}/${META_FILE}`)) as BenchMeta;
    if (meta.database) {
      benchStore = PostgresBenchStore.attach(meta.database);
    } else if (databaseServer !== null) {
      usage(`--reuse ${dir}: that run used the data directory's SQLite files, not --database`);
    } else {
      benchStore = new SqliteBenchStore(dir);
    }
    targetCalls = meta.calls;
    for (const f of meta.figures) {
      carried.push({ ...f, value: `${f.value} [from the run that built it, ${meta.builtAt}]` });
    }
    const ageDays = (Date.now() - Date.parse(meta.builtAt)) / DAY;
    if (ageDays > 1) {
      notes.push(
        `The reused directory was built ${
          ageDays.toFixed(1)
        } days ago: windows relative to now hold less data.`,
      );
    }
  } else {
    dir = keepDir ?? `${workDir}/data`;
    if (!(await isEmptyDir(dir))) usage(`--keep ${dir}: the directory is not empty`);
    await Deno.mkdir(dir, { recursive: true });
    benchStore = databaseServer === null
      ? new SqliteBenchStore(dir)
      : await PostgresBenchStore.create(databaseServer, { keep: keepDir !== undefined });
    // In time order every generated call is sent (the data must reach now);
    // actor by actor, sending stops at the target.
    const actors = Math.max(
      1,
      order === "time"
        ? Math.round(targetCalls / GENERATOR.callsPerActor)
        : Math.ceil((targetCalls / GENERATOR.callsPerActor) * 1.1),
    );
    const keys = await createKeys(dir, benchStore.databaseUrl, actors);
    ingestKeys = keys.ingestKeys;
    meta = {
      orgId: keys.orgId,
      apiKey: keys.apiKey,
      actorIds: keys.actorIds,
      calls: targetCalls,
      builtAt: date,
      commit,
      database: benchStore.databaseUrl,
      figures: [],
    };
  }
  const store = benchStore!;
  const storeText = await store.describe();
  currentApiKey = meta.apiKey;
  const apiKey = meta.apiKey;
  const actors = reuseDir ? meta.actorIds.length : ingestKeys.length;

  progress(`data directory ${dir}; store: ${storeText}; starting the server`);
  const wholeRun = new OtherLoad();
  await wholeRun.start((await store.cpuMs()) ?? 0);
  const startServer = () =>
    BenchServer.start(dir, { apiKey, logPath: newLogPath(), serveArgs: store.serveArgs });
  /** CPU of the server under test and of the store's own processes (PostgreSQL's backends). */
  const serverCpuMs = async (server: BenchServer) =>
    await server.cpuMs() + ((await store.cpuMs()) ?? 0);
  /** Stops a server, last reading the CPU of its PostgreSQL backends before they go. */
  const stopServer = async (server: BenchServer) => {
    await store.cpuMs();
    await server.stop();
  };
  /**
   * Everything but ingest and the last two phases, from the server that
   * measured the lists, details and insights (stopped here); returns a fresh
   * server for the phases that follow.
   */
  let rssNow: number | null = null;
  async function standardPhases(first: BenchServer): Promise<BenchServer> {
    rssNow = await first.rss();
    await rssPhase(first, null);
    const stopStarted = performance.now();
    await first.stop();
    report.add(
      "Footprint",
      "graceful shutdown (SIGTERM to exit)",
      ms(performance.now() - stopStarted),
    );
    for (const f of await store.footprint(calls)) report.add("Footprint", f.figure, f.value);
    const duckBytes = fileBytes(`${dir}/analytics.duckdb`);
    report.add(
      "Footprint",
      "analytics.duckdb bytes per tool call (DuckDB replica)",
      `${int(duckBytes / calls)} B (${bytes(duckBytes)})`,
    );

    // Start-up on the existing directory, to the first answered request.
    const startups: number[] = [];
    let firstInsightMs = NaN;
    for (let i = 0; i < budget.startups; i++) {
      progress(`start-up ${i + 1}/${budget.startups}`);
      const restarted = await startServer();
      startups.push(restarted.startupMs);
      if (i === 0) {
        const asked = performance.now();
        await insightsAnswered(restarted, apiKey, "90d", 50);
        firstInsightMs = restarted.startupMs + performance.now() - asked;
      }
      await stopServer(restarted);
    }
    const startupP50 = percentile(startups, 50);
    report.add(
      "Footprint",
      `start-up on this directory${
        store.engine === "postgres" ? " and database" : ""
      } to the first answered /v1/ping (spawn of \`deno run\` included)`,
      `${ms(startupP50)} median of ${startups.length} (max ${ms(Math.max(...startups))})`,
      { text: "≤ 2 s (target at 10M)", met: Math.max(...startups) <= 2000 },
    );
    report.add(
      "Footprint",
      "start-up to the first insight answered 200 (activity 90d; 503 while the replica catches up retried every 50 ms)",
      ms(firstInsightMs),
    );

    // A build in the server: its replica deleted, as after damage or an upgrade that rebuilds it.
    progress("replica build in the server at start-up");
    for (const file of ["analytics.duckdb", "analytics.duckdb.wal"]) {
      await Deno.remove(`${dir}/${file}`).catch(() => {});
    }
    const building = await startServer();
    await rssPhase(building, "replica build in the server");
    const buildNote = await fullCatchUp(building, store, await store.seq());
    await rssPhase(building, null);
    await stopServer(building);
    report.add("Replica", "build in the server at start-up: deleted replica → all rows", buildNote);

    // In-process: rebuild the replica from scratch, then DuckDB against the store's own insights.
    progress("replica rebuild in-process");
    for (const file of ["analytics.duckdb", "analytics.duckdb.wal"]) {
      await Deno.remove(`${dir}/${file}`).catch(() => {});
    }
    const rebuildStarted = performance.now();
    const analytics = await openAnalytics({
      path: `${dir}/analytics.duckdb`,
      source: store.replicaSource,
      timeoutMs: 3_600_000,
      quiet: true,
    });
    try {
      await analytics.ready;
      const wall = performance.now() - rebuildStarted;
      const stats = analytics.lastCatchUp;
      if (!stats) throw new Error("The replica rebuild copied nothing");
      report.add(
        "Replica",
        "full rebuild in-process (openAnalytics on a deleted replica; lastCatchUp)",
        `${int(stats.rows)} rows (seq ${int(stats.fromSeq)}→${int(stats.toSeq)}) in ${
          ms(stats.ms)
        } = ${int((stats.rows / stats.ms) * 1000)} rows/s (${ms(wall)} with opening)`,
      );
      await insightInProcessPhase(analytics, store, meta.orgId);
    } finally {
      await store.cpuMs().catch(() => null);
      await analytics.close();
    }
    reportInsights(store);
    detectionPhase();
    return await startServer();
  }
  // Their actors exist before the server that serves them starts.
  const phaseKeys = runs("metrics") || runs("mixed") || runs("retention") || runs("insights")
    ? await createPhaseActors(dir, store.databaseUrl, meta.orgId, 20)
    : [];
  let server = await startServer();
  let calls = targetCalls;
  try {
    if (!reuseDir) {
      const ingestLoad = new OtherLoad();
      await ingestLoad.start(await serverCpuMs(server));
      await rssPhase(server, "ingest (all but the last chunk)");
      const result = await ingestPhase(
        server,
        store,
        { ingestKeys },
        targetCalls,
        actors,
        new Date(),
      );
      calls = result.calls;
      meta.calls = calls;
      const load = await ingestLoad.stop(await serverCpuMs(server));
      report.add(
        "Ingest",
        `other processes on the machine during ingest (mean cores busy${
          store.engine === "postgres" ? ", this database's backends excluded" : ""
        }; host steal)`,
        `${load.others.toFixed(2)} cores; steal ${load.steal.toFixed(2)} cores over ${
          load.seconds.toFixed(0)
        } s`,
      );
      meta.figures = report.figures.filter((f) => f.area === "Ingest" || f.area === "Replica");
    } else {
      for (const f of carried) report.figures.push(f);
      await insightsAnswered(server, apiKey);
    }
    if (onlyPhases.length === 0) {
      await rssPhase(server, "lists, details and insights over HTTP");
      await listPhase(server, apiKey, meta.actorIds, true);
      await detailPhase(server, apiKey, store);
      // A reused directory keeps no ingest key: new data comes from the phases' actors.
      await insightHttpPhase(server, apiKey, ingestKeys.length > 0 ? ingestKeys : phaseKeys);
      await rssPhase(server, "export of every tool call over HTTP");
      await exportPhase(server, apiKey, await store.toolCalls());
      await rssPhase(server, null);
      server.assertAlive();
    } else {
      if (runs("insights")) {
        await insightHttpPhase(server, apiKey, ingestKeys.length > 0 ? ingestKeys : phaseKeys);
        reportInsights(store);
      }
      if (runs("export")) {
        await rssPhase(server, "export of every tool call over HTTP");
        await exportPhase(server, apiKey, await store.toolCalls());
        await rssPhase(server, null);
      }
    }
  } finally {
    await store.cpuMs().catch(() => null);
    await store.release();
  }
  if (onlyPhases.length === 0) {
    server = await standardPhases(server);
  }
  try {
    if (runs("metrics")) {
      await rssPhase(server, "metrics ingest");
      await metricsPhase(server, store, phaseKeys, () => serverCpuMs(server));
    }
    if (runs("mixed")) {
      await rssPhase(server, "mixed load");
      await mixedPhase(
        server,
        store,
        apiKey,
        meta.actorIds[0]!,
        phaseKeys,
        () => serverCpuMs(server),
      );
    }
    if (runs("retention")) {
      server = await retentionPhase(server, store, phaseKeys, stopServer, apiKey, dir);
    }
    server.assertAlive();
  } finally {
    await store.cpuMs().catch(() => null);
    await store.release();
  }
  const rssLast = await server.rss();
  await rssPhase(server, null);
  await stopServer(server);
  reportRss(rssNow ?? rssLast);

  if (keepDir) {
    await Deno.writeTextFile(`${dir}/${META_FILE}`, JSON.stringify(meta, null, 2));
  }
  const load = await wholeRun.stop((await store.cpuMs()) ?? 0);
  await store.release();
  report.add(
    "Machine",
    `other processes during the whole run (mean cores busy${
      store.engine === "postgres" ? ", this database's backends excluded" : ""
    }; host steal)`,
    `${load.others.toFixed(2)} cores; steal ${load.steal.toFixed(2)} cores over ${
      load.seconds.toFixed(0)
    } s`,
  );
  if (load.others > 0.1) {
    notes.push(
      `Other processes kept ${
        load.others.toFixed(2)
      } of ${navigator.hardwareConcurrency} cores busy on average during this run: the figures are pessimistic.`,
    );
  }
  const after = await gitCommit();
  if (after.commit !== commit || after.dirty !== dirty) {
    notes.push(
      `The code changed during the run (commit ${commit} → ${after.commit}${
        after.dirty !== dirty ? ", working tree under src/ or sql/ changed" : ""
      }): servers started later (start-up phase) ran the newer code.`,
    );
  }

  const seconds = (performance.now() - started) / 1000;
  const command = `deno task bench${quick ? " --quick" : ` --calls ${targetCalls}`}${
    keepDir ? ` --keep ${keepDir}` : ""
  }${reuseDir ? ` --reuse ${reuseDir}` : ""}${order === "time" ? "" : ` --order ${order}`}${
    databaseServer === null ? "" : ` --database ${withoutPassword(databaseServer)}`
  }${onlyPhases.map((phase) => ` --${phase}`).join("")}${
    args.values["mixed-seconds"] === undefined ? "" : ` --mixed-seconds ${mixedSeconds}`
  }${mixedConnections === 200 ? "" : ` --connections ${mixedConnections}`}`;
  const targets = report.targets();
  const summary = targets.map((f) =>
    `- ${f.target!.text} — **${verdict(f.target!)}**: ${f.area}, ${f.figure}: ${f.value}`
  );
  const text = [
    `# Benchmark: ${int(calls)} tool calls on ${store.label}${quick ? " (quick)" : ""}${
      onlyPhases.length > 0 ? `: ${onlyPhases.join(" and ")} only` : ""
    }`,
    "",
    `- Date: ${date}; commit ${commit}${
      dirty ? " with uncommitted changes under src/, sql/ or deno.json" : ""
    }`,
    `- Machine: ${host.cpu}; ${host.memory}; ${host.os}; Deno ${host.deno}`,
    `- Command: \`${command}\` (${seconds.toFixed(0)} s)`,
    `- Server: \`main.ts serve\` child process, default flags${
      store.engine === "postgres" ? " plus `--database`" : ""
    } (log level info, to a file; 2 reader threads); ${ingestConcurrency} ingest requests in flight`,
    `- Store: ${withoutPassword(storeText)}`,
    "",
    report.table(),
    "",
    ...sections.flatMap((s) => [s, ""]),
    "## Targets",
    "",
    ...summary,
    ...(notes.length > 0 ? ["", "## Notes", "", ...notes.map((n) => `- ${n}`)] : []),
    "",
  ].join("\n");
  return { text, calls: targetCalls, engine: store.engine };
}

// ------------------------------------------------------------------ cleanup and exit

let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  return cleaning ??= (async () => {
    await killAllServers();
    await benchStore?.dispose().catch((error) => progress(`could not drop the database: ${error}`));
    await Deno.remove(workDir, { recursive: true }).catch(() => {});
  })();
}

async function fail(error: unknown): Promise<never> {
  // deno-lint-ignore no-console
  console.error(`bench failed: ${error instanceof Error ? error.stack ?? error.message : error}`);
  const lines = serverLogCount > 0 ? await tail(`${workDir}/server-${serverLogCount}.log`) : "";
  // deno-lint-ignore no-console
  if (lines) console.error(`--- server log (last lines)\n${lines}`);
  await cleanup();
  Deno.exit(1);
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, async () => {
    progress(`${signal}: stopping the server and removing ${workDir}`);
    await cleanup();
    Deno.exit(130);
  });
}
globalThis.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  fail(event.reason);
});

try {
  const { text, calls, engine } = await run();
  const phases = onlyPhases.map((phase) => `-${phase}`).join("");
  const out = new URL(`../.bench/bench-${calls}-${engine}${phases}.md`, import.meta.url);
  await Deno.mkdir(new URL(".", out), { recursive: true });
  await Deno.writeTextFile(out, text);
  // deno-lint-ignore no-console
  console.log(`\n${text}\n(written to ${out.pathname})`);
  await cleanup();
  Deno.exit(0);
} catch (error) {
  await fail(error);
}
