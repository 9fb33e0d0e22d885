/**
 * Ingest profile, in-process: where the server's time per tool call goes.
 * Times each stage of the ingest path separately over the same generated
 * exports (batches of 512 records) — body encoding (client side), JSON.parse,
 * decode, agent mapping, detection, row ids — then the SQLite write
 * transaction (`TelemetryWriter.ingest`, which runs detection and ids again
 * inside) on fresh databases under several variants of pragmas and indexes,
 * optionally with a per-statement breakdown.
 *
 * ```sh
 * deno run -A scripts/_bench_profile.ts [--calls N] [--prefill N] [--variants a,b] [--statements] [--ids]
 * ```
 *
 * `--calls` tool calls measured (default 50,000) after `--prefill` calls
 * already stored (default 0: the cost of random-key inserts grows with the
 * table). Variants: `server` (the writer thread's connection: 128 MiB page
 * cache, `wal_autocheckpoint=4096` so COMMITs checkpoint every 16 MiB of
 * WAL), `defer-checkpoint` (`wal_autocheckpoint=0`, the checkpoint timed
 * apart, as if another thread ran it), `cache-1g` (server with a 1 GiB
 * cache), `no-secondary` (server with every tool/model call secondary index
 * dropped but `*_by_seq`).
 *
 * `--prefill-older` dates the prefilled calls 100 days before the measured
 * ones (as live ingest, appending at the right edge of the time indexes)
 * instead of over the same 100 days (a backfill, as the benchmark sends).
 *
 * `--ids` adds the id-locality experiment: the writer's random primary keys
 * against session-clustered ones, raw inserts of the same rows.
 *
 * Imports `src/` read-only; writes only to temporary directories it deletes.
 *
 * @module
 */
import { DatabaseSync, StatementSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { detectToolCall } from "../src/detect/mod.ts";
import { mapRecord } from "../src/ingest/agents/mod.ts";
import { decodeExport } from "../src/ingest/otlp/mod.ts";
import type { TelemetryEvent } from "../src/ingest/types.ts";
import { telemetryMigrations } from "../src/store/migrations.ts";
import { migrate, openDatabase } from "../src/store/sqlite.ts";
import { deriveRowId, TelemetryWriter } from "../src/store/telemetry_writer.ts";
import { encodeJson, type GeneratedExport, generateExports } from "./gen.ts";
import { type JsonLogsRequest, protobufLogs } from "./otlp_protobuf.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    calls: { type: "string", default: "50000" },
    prefill: { type: "string", default: "0" },
    variants: { type: "string", default: "server,defer-checkpoint,no-secondary" },
    statements: { type: "boolean", default: false },
    ids: { type: "boolean", default: false },
    "prefill-older": { type: "boolean", default: false },
  },
});
const calls = Number(values.calls);
const prefill = Number(values.prefill);

// deno-lint-ignore no-console
const say = (line: string) => console.log(line);

// ------------------------------------------------------------ per-statement timing (optional)

const statementStats = new Map<string, { n: number; ms: number }>();
function countStatement(key: string, ms: number) {
  const entry = statementStats.get(key) ?? { n: 0, ms: 0 };
  entry.n++;
  entry.ms += ms;
  statementStats.set(key, entry);
}
if (values.statements) {
  type Fn = (...args: unknown[]) => unknown;
  const proto = StatementSync.prototype as unknown as Record<string, Fn>;
  for (const mode of ["run", "get", "all"]) {
    const original = proto[mode]!;
    proto[mode] = function (this: StatementSync, ...args: unknown[]) {
      const started = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        countStatement(
          this.sourceSQL.replace(/\s+/g, " ").slice(0, 56),
          performance.now() - started,
        );
      }
    };
  }
  const exec = DatabaseSync.prototype.exec;
  DatabaseSync.prototype.exec = function (this: DatabaseSync, sql: string) {
    const started = performance.now();
    try {
      return exec.call(this, sql);
    } finally {
      countStatement(`exec ${sql.slice(0, 40)}`, performance.now() - started);
    }
  };
}
function printStatements(total: number) {
  const rows = [...statementStats].sort((a, b) => b[1].ms - a[1].ms).slice(0, 14);
  for (const [sql, { n, ms }] of rows) {
    say(
      `    ${ms.toFixed(0).padStart(6)} ms ${((ms / total) * 100).toFixed(0).padStart(3)}% ${
        String(n).padStart(8)
      } × ${((ms * 1000) / n).toFixed(1).padStart(7)} µs  ${sql}`,
    );
  }
  statementStats.clear();
}

// ------------------------------------------------------------------------------ stages

function exportsFor(target: number, seed: number, now = new Date()): GeneratedExport[] {
  const out: GeneratedExport[] = [];
  let n = 0;
  for (
    const e of generateExports({
      actors: Math.max(1, Math.ceil(target / 12_000)),
      days: 100,
      seed,
      now,
      batchRecords: 512,
    })
  ) {
    if (n >= target) break;
    out.push(e);
    n += e.toolCalls;
  }
  return out;
}

/** Best of `runs` timings, milliseconds, and the last value. */
function best<T>(runs: number, fn: () => T): [T, number] {
  let value: T | undefined;
  let min = Infinity;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    value = fn();
    min = Math.min(min, performance.now() - started);
  }
  return [value!, min];
}

const perCall = (ms: number, n: number) => `${((ms * 1000) / n).toFixed(1).padStart(6)} µs/call`;
const rate = (ms: number, n: number) =>
  `${Math.round((n / ms) * 1000).toLocaleString("en-US").padStart(9)} calls/s`;
const line = (name: string, ms: number, n: number) =>
  say(`${name.padEnd(34)} ${perCall(ms, n)}  ${rate(ms, n)}`);

const [exports, genMs] = best(1, () => exportsFor(calls, 7));
const n = exports.reduce((sum, e) => sum + e.toolCalls, 0);
say(`${n.toLocaleString("en-US")} tool calls in ${exports.length} exports of ≤512 records\n`);
say("client side (the bench process)");
line("  generate export objects", genMs, n);
const [jsonBodies, jsonMs] = best(2, () => exports.map((e) => encodeJson(e.body)));
line("  encode JSON", jsonMs, n);
const [pbBodies, pbMs] = best(2, () => exports.map((e) => protobufLogs(e.body as JsonLogsRequest)));
line("  encode protobuf", pbMs, n);
const sum = (bodies: Uint8Array[]) => bodies.reduce((s, b) => s + b.length, 0);
say(
  `  bytes per tool call: JSON ${Math.round(sum(jsonBodies) / n)}, protobuf ${
    Math.round(sum(pbBodies) / n)
  }\n`,
);

say("server side, per stage (best of 3)");
const utf8 = new TextDecoder("utf-8", { fatal: true });
const [, parseMs] = best(3, () => jsonBodies.map((b) => JSON.parse(utf8.decode(b))));
line("  JSON.parse(TextDecoder) only", parseMs, n);
const [jsonRecords, decJsonMs] = best(
  3,
  () => jsonBodies.map((b) => decodeExport(b, { encoding: "json", pathSignal: "logs" }).records),
);
line("  decodeExport JSON", decJsonMs, n);
const [, decPbMs] = best(
  3,
  () => pbBodies.map((b) => decodeExport(b, { encoding: "protobuf", pathSignal: "logs" }).records),
);
line("  decodeExport protobuf", decPbMs, n);
const [events, mapMs] = best(3, () =>
  jsonRecords.map((records) => {
    const out: TelemetryEvent[] = [];
    for (const r of records) {
      const m = mapRecord(r);
      if (m.status === "mapped") out.push(...m.events);
    }
    return out;
  }));
line("  mapRecord", mapMs, n);
const [, detectMs] = best(3, () => {
  for (const e of events.flat()) {
    if (e.kind !== "tool_call") continue;
    detectToolCall({
      toolName: e.toolName,
      toolType: e.toolType,
      category: e.category,
      ...(e.arguments === undefined ? {} : { arguments: e.arguments }),
      ...(e.result === undefined ? {} : { result: e.result }),
    }, { redact: true });
  }
});
line("  detectToolCall", detectMs, n);
const [, cloneMs] = best(3, () => events.map((evs) => structuredClone(evs)));
line("  structuredClone(events) (to a worker)", cloneMs, n);
const allEvents = events.flat();
const [, idMs] = best(3, () => {
  for (const e of allEvents) deriveRowId("tc", "org_x", e.sessionId, "identity-of-event-0001");
});
line(`  deriveRowId ×${(allEvents.length / n).toFixed(2)} (sha256)`, idMs, n);
say("");

// --------------------------------------------------------------------- write variants

function openVariant(path: string, variant: string): DatabaseSync {
  const db = openDatabase(path, { cacheMiB: variant === "cache-1g" ? 1024 : 128 });
  migrate(db, telemetryMigrations);
  db.exec(`PRAGMA wal_autocheckpoint = ${variant === "defer-checkpoint" ? 0 : 4096}`);
  if (variant === "no-secondary") {
    const indexes = db.prepare(
      "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('tool_calls', 'model_calls') AND sql IS NOT NULL AND name NOT LIKE '%_by_seq'",
    ).all() as { name: string }[];
    for (const { name } of indexes) db.exec(`DROP INDEX ${name}`);
  }
  return db;
}

const sender = (actor: number, base: number) => ({
  orgId: "org_bench",
  actorId: `act_${base + actor}`,
});
// `--prefill-older`: the stored calls are the 100 days before the measured ones, so the
// measured inserts land at the right edge of the time indexes, as live ingest does.
const prefillExports = prefill > 0
  ? exportsFor(
    prefill,
    99,
    values["prefill-older"] ? new Date(Date.now() - 100 * 86_400_000) : undefined,
  )
  : [];
say(
  `SQLite write: TelemetryWriter.ingest, one transaction per export${
    prefill > 0 ? `, after ${prefill.toLocaleString("en-US")} calls stored` : ""
  }`,
);
for (const variant of values.variants.split(",")) {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-profile-" });
  try {
    const db = openVariant(`${dir}/telemetry.db`, variant);
    const writer = new TelemetryWriter(db, { redactSecrets: true });
    for (const e of prefillExports) {
      const records = decodeExport(encodeJson(e.body), { encoding: "json", pathSignal: "logs" })
        .records;
      const evs: TelemetryEvent[] = [];
      for (const r of records) {
        const m = mapRecord(r);
        if (m.status === "mapped") evs.push(...m.events);
      }
      writer.ingest(sender(e.actor, 10_000), evs);
    }
    if (prefill > 0) db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    statementStats.clear();
    const [, writeMs] = best(1, () => {
      events.forEach((evs, i) => writer.ingest(sender(exports[i]!.actor, 0), evs));
    });
    const sqliteMs = writeMs - detectMs - idMs;
    line(`  [${variant}] ingest`, writeMs, n);
    line(`  [${variant}]   of which SQLite (est.)`, sqliteMs, n);
    if (values.statements) printStatements(writeMs);
    if (variant === "defer-checkpoint") {
      const [, checkpointMs] = best(1, () => db.exec("PRAGMA wal_checkpoint(TRUNCATE)"));
      line(`  [${variant}]   deferred checkpoint`, checkpointMs, n);
    }
    db.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

// ------------------------------------------------------------- id locality (--ids)

/**
 * The cost of random primary keys in isolation: the same tool call rows
 * inserted with the writer's ids (sha256 of org, session and identity) and
 * with ids whose first 8 hex digits hash the session only, so a session's rows
 * sit together in the primary-key index. Raw inserts with the writer's SQL on
 * the migrated schema, one transaction per export, after `--prefill` rows.
 */
async function idLocality() {
  const { createHash } = await import("node:crypto");
  const { parseNamedSql, namedSql } = await import("../src/store/named_sql.ts");
  const ingestSql = await Deno.readTextFile(new URL("../sql/sqlite/ingest.sql", import.meta.url));
  const insertSql = namedSql(parseNamedSql(ingestSql), "insert_tool_call");
  const hex = (text: string) => createHash("sha256").update(text).digest("hex");
  const schemes: Record<string, (session: string, identity: string) => string> = {
    "random (sha256 of org, session, identity)": (session, identity) =>
      `tc_${hex(`org\u0000${session}\u0000${identity}`).slice(0, 32)}`,
    "session-clustered (hash(session)[0:8] + hash(identity)[0:24])": (session, identity) =>
      `tc_${hex(`org\u0000${session}`).slice(0, 8)}${
        hex(`org\u0000${session}\u0000${identity}`).slice(0, 24)
      }`,
  };
  const batches = events.map((evs) =>
    evs.filter((e): e is Extract<TelemetryEvent, { kind: "tool_call" }> => e.kind === "tool_call")
  );
  const rowsOf = (idOf: (s: string, i: string) => string, salt: string) =>
    batches.map((batch) =>
      batch.map((e) => [
        idOf(salt + e.sessionId, e.identity),
        "org_bench",
        0,
        salt + e.sessionId,
        "act",
        e.timeMs,
        e.toolName,
        e.toolType,
        e.category,
        e.outcome,
        e.durationMs,
        e.resultSizeBytes,
        e.agentSystem,
        e.agentVersion,
        e.model ?? null,
        e.errorMessage ?? null,
        e.errorType ?? null,
        e.decision ?? null,
        e.decisionSource ?? null,
        e.promptId ?? null,
        e.agentName ?? null,
        e.providerName ?? null,
        e.toolCallId ?? null,
        e.toolUseId ?? null,
        e.toolDescription ?? null,
        e.source,
        e.arguments ?? null,
        e.result ?? null,
        e.mcpServerName ?? null,
        e.mcpServerScope ?? null,
        e.osType ?? null,
        e.hostArch ?? null,
        e.terminalType ?? null,
        e.cwd ?? null,
        e.traceId ?? null,
        e.spanId ?? null,
      ])
    );
  say(
    `\nid locality: INSERT tool_calls only, one transaction per export${
      prefill > 0 ? `, after ${prefill.toLocaleString("en-US")} rows` : ""
    }`,
  );
  for (const [scheme, idOf] of Object.entries(schemes)) {
    const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-profile-" });
    try {
      const db = openVariant(`${dir}/telemetry.db`, "server");
      const insert = db.prepare(insertSql);
      let seq = 0;
      const write = (rows: ReturnType<typeof rowsOf>) => {
        for (const batch of rows) {
          db.exec("BEGIN IMMEDIATE");
          for (const row of batch) {
            row[2] = ++seq;
            insert.run(...(row as (string | number | null)[]));
          }
          db.exec("COMMIT");
        }
      };
      for (let done = 0, round = 0; done < prefill; round++) {
        const rows = rowsOf(idOf, `p${round}-`);
        write(rows);
        done += rows.reduce((s, b) => s + b.length, 0);
        if (round % 4 === 3) db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      }
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      const rows = rowsOf(idOf, "m-");
      const count = rows.reduce((s, b) => s + b.length, 0);
      const [, insertMs] = best(1, () => write(rows));
      const [, checkpointMs] = best(1, () => db.exec("PRAGMA wal_checkpoint(TRUNCATE)"));
      line(`  ${scheme}`, insertMs, count);
      line(`    + its checkpoint`, checkpointMs, count);
      db.close();
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
}
if (values.ids) await idLocality();
