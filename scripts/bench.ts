/**
 * The benchmark: builds a data directory of realistic telemetry through the
 * real ingest path, then measures the running server over HTTP from this
 * separate process, and prints a Markdown table (also written to
 * `.bench/bench-<calls>.md`).
 *
 * `deno task bench [--calls N] [--quick]` — N tool calls (default
 * 1,000,000); `--quick` is a 100k smoke run that fails only on errors.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import {
  INSIGHT_NAMES,
  insightWindow,
  openAnalytics,
  runSqliteInsight,
} from "../src/analytics/mod.ts";
import { detectToolCall } from "../src/detect/mod.ts";
import { openKeyStore } from "../src/store/data_dir.ts";
import { encodeJson, generateExports } from "./gen.ts";
import { type JsonLogsRequest, protobufLogs } from "./otlp_protobuf.ts";

const args = parseArgs({
  args: Deno.args,
  options: {
    calls: { type: "string" },
    quick: { type: "boolean" },
    keep: { type: "string" },
  },
});
const quick = args.values.quick ?? false;
const targetCalls = Number(args.values.calls ?? (quick ? 100_000 : 1_000_000));
const samples = quick ? 30 : 200;
const rows: [string, string, string][] = [];

function record(section: string, figure: string, value: string) {
  rows.push([section, figure, value]);
  // deno-lint-ignore no-console
  console.log(`${section} | ${figure} | ${value}`);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const int = (value: number) => Math.round(value).toLocaleString("en-US");

// --- data directory and server --------------------------------------------------------------

const dir = args.values.keep ?? await Deno.makeTempDir({ prefix: "agent-telemetry-bench-" });
const keys = openKeyStore(dir);
const org = keys.createOrg("Bench");
const member = keys.addMember(org.id, "bench@example.com");
const apiKey = keys.createKey(org.id, member.id, "bench").key;
const actorsPerBatch = 50;
const callsPer50Actors = 600_000;
const actorCount = Math.max(1, Math.ceil((targetCalls / callsPer50Actors) * actorsPerBatch));
const ingestKeys = Array.from(
  { length: actorCount },
  (_, i) => keys.createActor(org.id, `a${i}`).ingest_key,
);
keys.close();

interface Server {
  child: Deno.ChildProcess;
  queryUrl: string;
  ingestUrl: string;
  startedMs: number;
}

async function startServer(): Promise<Server> {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      new URL("../main.ts", import.meta.url).pathname,
      "serve",
      "--data",
      dir,
      "--listen",
      "127.0.0.1:0",
      "--ingest-listen",
      "127.0.0.1:0",
      "--log-level",
      "error",
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("OTLP ingest listening on")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`Server exited: ${out}`);
    out += value;
  }
  reader.releaseLock();
  const queryUrl = /query API listening on (\S+)/.exec(out)![1]!;
  const ingestUrl = /OTLP ingest listening on (\S+)/.exec(out)![1]!;
  const ping = await fetch(`${queryUrl}/v1/ping`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  await ping.body?.cancel();
  return { child, queryUrl, ingestUrl, startedMs: performance.now() - started };
}

async function stopServer(server: Server): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${server.child.pid}/status`).catch(() => "");
  const peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  server.child.kill("SIGTERM");
  await server.child.status;
  await server.child.stdout.cancel().catch(() => {});
  return peakKb * 1024;
}

// --- ingest ---------------------------------------------------------------------------------

async function ingest(server: Server): Promise<void> {
  const half = Math.floor(targetCalls / 2);
  const phases = { json: { calls: 0, ms: 0, bytes: 0 }, protobuf: { calls: 0, ms: 0, bytes: 0 } };
  let sent = 0;
  const inFlight = new Set<Promise<void>>();
  let phaseStart = performance.now();
  let phase: "json" | "protobuf" = "json";
  const generator = generateExports({
    actors: actorCount,
    days: 100,
    seed: 7,
    now: new Date(),
    batchRecords: 512,
  });
  for (const batch of generator) {
    if (sent >= targetCalls) break;
    if (phase === "json" && sent >= half) {
      await Promise.all(inFlight);
      phases.json.ms = performance.now() - phaseStart;
      phase = "protobuf";
      phaseStart = performance.now();
    }
    const body = phase === "json"
      ? encodeJson(batch.body)
      : protobufLogs(batch.body as JsonLogsRequest);
    phases[phase].bytes += body.length;
    phases[phase].calls += batch.toolCalls;
    sent += batch.toolCalls;
    const request = fetch(`${server.ingestUrl}/v1/logs`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${ingestKeys[batch.actor]}`,
        "content-type": phase === "json" ? "application/json" : "application/x-protobuf",
      },
      body: body as Uint8Array<ArrayBuffer>,
    }).then(async (response) => {
      if (response.status !== 200) {
        throw new Error(`Ingest failed: ${response.status} ${await response.text()}`);
      }
      await response.body?.cancel();
    });
    const tracked = request.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (inFlight.size >= 4) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  phases[phase].ms = performance.now() - phaseStart;
  record("Ingest", "tool calls ingested", int(sent));
  for (const name of ["json", "protobuf"] as const) {
    const p = phases[name];
    record(
      "Ingest",
      `${name === "json" ? "JSON" : "protobuf"} /v1/logs, batches of 512 records, detection on`,
      `${int((p.calls / p.ms) * 1000)} tool calls/s (${int(p.calls)} calls, ${
        (p.ms / 1000).toFixed(1)
      } s)`,
    );
  }
}

// --- HTTP latency -----------------------------------------------------------------------------

async function timedGet(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${body}`);
  return performance.now() - started;
}

async function latency(section: string, name: string, urls: () => string) {
  for (let i = 0; i < 5; i++) await timedGet(urls());
  const sequential: number[] = [];
  for (let i = 0; i < samples; i++) sequential.push(await timedGet(urls()));
  record(
    section,
    `${name}, concurrency 1`,
    `p50 ${ms(percentile(sequential, 50))}, p99 ${ms(percentile(sequential, 99))}, ${
      int(1000 / (sequential.reduce((a, b) => a + b) / sequential.length))
    } req/s`,
  );
  const started = performance.now();
  const concurrent: number[] = [];
  await Promise.all(Array.from({ length: 16 }, async () => {
    for (let i = 0; i < samples / 4; i++) concurrent.push(await timedGet(urls()));
  }));
  const seconds = (performance.now() - started) / 1000;
  record(
    section,
    `${name}, concurrency 16`,
    `p50 ${ms(percentile(concurrent, 50))}, p99 ${ms(percentile(concurrent, 99))}, ${
      int(concurrent.length / seconds)
    } req/s`,
  );
}

async function getJson(server: Server, path: string) {
  const response = await fetch(`${server.queryUrl}${path}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  return await response.json();
}

async function lists(server: Server) {
  const base = server.queryUrl;
  const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString();
  await latency("Lists", "/v1/sessions", () => `${base}/v1/sessions`);
  await latency(
    "Lists",
    "/v1/sessions?after=(7 days ago)&limit=50",
    () => `${base}/v1/sessions?after=${weekAgo}`,
  );
  await latency("Lists", "/v1/tool-calls", () => `${base}/v1/tool-calls`);
  await latency(
    "Lists",
    "/v1/tool-calls?tool_name=Bash&outcome=error",
    () => `${base}/v1/tool-calls?tool_name=Bash&outcome=error`,
  );
  // Page 1 against page 1,000 of the same walk (limit 50).
  const cursors: string[] = [];
  let cursor: string | undefined;
  for (let page = 1; page < 1000; page++) {
    const body = await getJson(
      server,
      `/v1/tool-calls?limit=50${cursor ? `&cursor=${cursor}` : ""}`,
    );
    cursor = body.next_cursor;
    if (!cursor) break;
    cursors.push(cursor);
  }
  const last = cursors.at(-1);
  const first: number[] = [];
  const deep: number[] = [];
  for (let i = 0; i < samples; i++) {
    first.push(await timedGet(`${base}/v1/tool-calls?limit=50`));
    if (last) deep.push(await timedGet(`${base}/v1/tool-calls?limit=50&cursor=${last}`));
  }
  record(
    "Lists",
    "/v1/tool-calls page 1 (limit 50)",
    `p50 ${ms(percentile(first, 50))}, p99 ${ms(percentile(first, 99))}`,
  );
  if (last) {
    record(
      "Lists",
      `/v1/tool-calls page ${cursors.length + 1} of the same walk`,
      `p50 ${ms(percentile(deep, 50))}, p99 ${ms(percentile(deep, 99))} (${
        (percentile(deep, 50) / percentile(first, 50)).toFixed(2)
      }× page 1)`,
    );
  }
}

async function details(server: Server) {
  const sessions = (await getJson(server, "/v1/sessions?limit=500")).data.map((
    s: { session_id: string },
  ) => s.session_id);
  const calls = (await getJson(server, "/v1/tool-calls?limit=500")).data.map((c: { id: string }) =>
    c.id
  );
  let i = 0;
  await latency(
    "Details",
    "/v1/sessions/{id}",
    () => `${server.queryUrl}/v1/sessions/${encodeURIComponent(sessions[i++ % sessions.length])}`,
  );
  await latency(
    "Details",
    "/v1/tool-calls/{id}",
    () => `${server.queryUrl}/v1/tool-calls/${calls[i++ % calls.length]}`,
  );
}

// --- insights ---------------------------------------------------------------------------------

async function insights(server: Server) {
  const runs = quick ? 5 : 15;
  const db = new DatabaseSync(`${dir}/telemetry.db`, { readOnly: true });
  try {
    for (const name of INSIGHT_NAMES) {
      for (const window of ["7d", "30d", "90d"] as const) {
        const url = `${server.queryUrl}/v1/insights/${name}?window=${window}`;
        await timedGet(url);
        const duck: number[] = [];
        for (let i = 0; i < runs; i++) duck.push(await timedGet(url));
        const lite: number[] = [];
        for (let i = 0; i < Math.max(3, Math.floor(runs / 3)); i++) {
          const started = performance.now();
          runSqliteInsight(db, name, org.id, insightWindow(window, "daily", Date.now()));
          lite.push(performance.now() - started);
        }
        const d = percentile(duck, 50);
        const s = percentile(lite, 50);
        record(
          "Insights",
          `/v1/insights/${name} ${window}`,
          `DuckDB p50 ${ms(d)} over HTTP; SQLite ${ms(s)} in-process; ${
            (s / d).toFixed(1)
          }× faster`,
        );
      }
    }
  } finally {
    db.close();
  }
}

async function replicaRebuild() {
  await Deno.remove(`${dir}/analytics.duckdb`).catch(() => {});
  await Deno.remove(`${dir}/analytics.duckdb.wal`).catch(() => {});
  const started = performance.now();
  const analytics = await openAnalytics({
    path: `${dir}/analytics.duckdb`,
    telemetryPath: `${dir}/telemetry.db`,
    timeoutMs: 600_000,
    quiet: true,
  });
  await analytics.ready;
  const seconds = (performance.now() - started) / 1000;
  const copied = analytics.lastCatchUp;
  await analytics.close();
  const rowsCopied = copied ? Object.values(copied).find((v) => typeof v === "number" && v > 0) : 0;
  record(
    "Replica",
    "SQLite → DuckDB rebuild of the whole replica",
    `${seconds.toFixed(1)} s (${JSON.stringify(copied)}; ${rowsCopied ? "" : ""})`,
  );
}

function detectionCost() {
  const inputs: Parameters<typeof detectToolCall>[0][] = [];
  for (
    const batch of generateExports({
      actors: 3,
      days: 5,
      seed: 11,
      now: new Date(),
      batchRecords: 512,
    })
  ) {
    for (const resource of (batch.body as JsonLogsRequest).resourceLogs) {
      for (const scope of resource.scopeLogs) {
        for (const record of scope.logRecords) {
          const attrs = Object.fromEntries(
            (record.attributes ?? []).map((kv) => [kv.key, kv.value?.stringValue]),
          );
          const name = attrs["tool_name"] ?? attrs["function_name"];
          if (!name) continue;
          inputs.push({
            toolName: name,
            toolType: name.startsWith("mcp__") ? "mcp" : "builtin",
            category: "other",
            ...(attrs["tool_input"] ? { arguments: attrs["tool_input"] } : {}),
            ...(attrs["arguments"] ? { arguments: attrs["arguments"] } : {}),
            ...(attrs["output"] ? { result: attrs["output"] } : {}),
          });
        }
      }
    }
  }
  for (const input of inputs.slice(0, 2000)) detectToolCall(input, { redact: true });
  const started = performance.now();
  let n = 0;
  while (performance.now() - started < 2000) {
    for (const input of inputs) detectToolCall(input, { redact: true });
    n += inputs.length;
  }
  record(
    "Detection",
    "detectToolCall per generated tool call (in-process)",
    `${(((performance.now() - started) * 1000) / n).toFixed(2)} µs`,
  );
}

// --- footprint ------------------------------------------------------------------------------

function fileBytes(path: string): number {
  let total = 0;
  for (const suffix of ["", "-wal", ".wal"]) {
    try {
      total += Deno.statSync(path + suffix).size;
    } catch {
      // absent
    }
  }
  return total;
}

// --- run --------------------------------------------------------------------------------------

const cpu = (await Deno.readTextFile("/proc/cpuinfo")).match(/model name\s*:\s*(.+)/)?.[1] ??
  "unknown";
const memGiB =
  Number(/MemTotal:\s+(\d+)/.exec(await Deno.readTextFile("/proc/meminfo"))?.[1] ?? 0) / 1024 /
  1024;
record("Machine", "CPU", `${navigator.hardwareConcurrency} × ${cpu}`);
record("Machine", "memory", `${memGiB.toFixed(1)} GiB`);

let server = await startServer();
try {
  await ingest(server);
  const catchUpStarted = performance.now();
  await timedGet(`${server.queryUrl}/v1/insights/activity?window=90d`);
  record(
    "Replica",
    "first insight after ingest (catch-up of every row included)",
    ms(performance.now() - catchUpStarted),
  );
  await lists(server);
  await details(server);
  await insights(server);
} finally {
  const peak = await stopServer(server);
  record(
    "Footprint",
    "server peak RSS (VmHWM) during ingest and queries",
    `${(peak / 1024 / 1024).toFixed(0)} MiB`,
  );
}
const sqliteBytes = fileBytes(`${dir}/telemetry.db`);
const duckBytes = fileBytes(`${dir}/analytics.duckdb`);
record(
  "Footprint",
  "telemetry.db bytes per tool call",
  `${(sqliteBytes / targetCalls).toFixed(0)} B (${(sqliteBytes / 2 ** 20).toFixed(0)} MiB)`,
);
record(
  "Footprint",
  "analytics.duckdb bytes per tool call",
  `${(duckBytes / targetCalls).toFixed(0)} B (${(duckBytes / 2 ** 20).toFixed(0)} MiB)`,
);
server = await startServer();
record(
  "Footprint",
  "start-up to the first answered /v1/ping on this directory",
  ms(server.startedMs),
);
await stopServer(server);
await replicaRebuild();
detectionCost();

const table = [
  `# Benchmark: ${int(targetCalls)} tool calls${quick ? " (quick)" : ""}`,
  "",
  `${new Date().toISOString()}, \`deno task bench --calls ${targetCalls}\``,
  "",
  "| Area | Figure | Value |",
  "|---|---|---|",
  ...rows.map(([a, b, c]) => `| ${a} | ${b} | ${c} |`),
  "",
].join("\n");
await Deno.mkdir(".bench", { recursive: true });
await Deno.writeTextFile(`.bench/bench-${targetCalls}.md`, table);
if (!args.values.keep) await Deno.remove(dir, { recursive: true });
// deno-lint-ignore no-console
console.log(`\n${table}`);
