/**
 * The PostgreSQL telemetry writer against the SQLite one: the same events
 * store the same rows in every table (seq and txid aside), also when two
 * writers on separate pools ingest into the same sessions at once; retention
 * by age and `detect rescan` agree too.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { encodeJson, generateExports } from "../src/demo/mod.ts";
import { receiveExport } from "../src/ingest/receive.ts";
import type {
  DecisionEvent,
  ModelCallEvent,
  SessionInfoEvent,
  TelemetryEvent,
  ToolCallEvent,
} from "../src/model/telemetry.ts";
import { emptyIngestSummary } from "../src/store/ingest_batch.ts";
import { dataPaths, openTelemetryWriter } from "../src/store/sqlite/data_dir.ts";
import type { IngestSummary, Sender } from "../src/store/stores.ts";
import { connectPostgres, type Sql } from "../src/store/postgres/client.ts";
import { migratePostgres } from "../src/store/postgres/migrate.ts";
import { PgTelemetryWriter } from "../src/store/postgres/telemetry_writer.ts";
import { Retention } from "../src/store/sqlite/retention.ts";
import type { RetentionOptions } from "../src/store/stores.ts";
import { openDatabase } from "../src/store/sqlite/database.ts";
import type { TelemetryWriter } from "../src/store/sqlite/telemetry_writer.ts";
import { createTestDatabase, pgTestUrl, type TestDatabase } from "./_pg.ts";

const ignore = !pgTestUrl();
const T0 = Date.UTC(2026, 10, 21, 9);
const DAY = 86_400_000;
const RETENTION: RetentionOptions = { retentionDays: 90, maxDiskBytes: null, batchSize: 3 };
const GITHUB_TOKEN = "ghp_R8m2Kq7Zt4Vw9Xy3Bn6Lc1Pd5Fg0Hj2Sa4Qe";

type Row = Record<string, unknown>;
type Batch = { sender: Sender; events: TelemetryEvent[] };

const ORG_A: Sender = { orgId: "org_A", actorId: "act_1" };
const ORG_B: Sender = { orgId: "org_b", actorId: "act_2" };

const agent = { agentSystem: "claude-code", agentVersion: "2.1.0" };

function result(
  sessionId: string,
  identity: string,
  timeMs: number,
  more: Partial<ToolCallEvent> = {},
): ToolCallEvent {
  return {
    kind: "tool_call",
    sessionId,
    timeMs,
    ...agent,
    identity,
    toolName: "Bash",
    toolType: "builtin",
    category: "code_exec",
    outcome: "ok",
    durationMs: 12,
    resultSizeBytes: 40,
    toolCallId: identity,
    arguments: JSON.stringify({ command: `echo ${identity}` }),
    source: "otlp_logs",
    ...more,
  };
}

function decision(
  sessionId: string,
  identity: string,
  timeMs: number,
  verdict: string,
  more: Partial<DecisionEvent> = {},
): DecisionEvent {
  return {
    kind: "decision",
    sessionId,
    timeMs,
    ...agent,
    identity,
    toolName: "Bash",
    toolType: "builtin",
    category: "code_exec",
    toolCallId: identity,
    decision: verdict,
    decisionSource: "user_reject",
    rejects: verdict === "reject",
    arguments: JSON.stringify({ command: "rm -rf /tmp/x" }),
    source: "otlp_logs",
    ...more,
  };
}

function modelCall(
  sessionId: string,
  identity: string,
  timeMs: number,
  more: Partial<ModelCallEvent> = {},
): ModelCallEvent {
  return {
    kind: "model_call",
    sessionId,
    timeMs,
    ...agent,
    identity,
    providerName: "",
    model: "claude-opus-4-1",
    inputTokens: 100,
    outputTokens: 50,
    cacheReadTokens: 10,
    cacheCreationTokens: 5,
    costUsd: 0.25,
    durationMs: 900,
    ...more,
  };
}

/** What an export stored: `toolCalls` and `modelCalls`, no cost, error or flag. */
function stored(toolCalls: number, modelCalls: number): IngestSummary {
  return { ...emptyIngestSummary(), toolCalls, modelCalls };
}

function sessionInfo(sessionId: string, providerName: string, timeMs: number): SessionInfoEvent {
  return { kind: "session_info", sessionId, timeMs, ...agent, identity: "", providerName };
}

/** Batches covering the write path's cases, in the order they matter. */
function edgeCaseBatches(t = T0): Batch[] {
  return [{
    sender: ORG_A,
    events: [
      result("s1", "a", t, { model: "m-old" }),
      result("s1", "b", t + 1, { outcome: "error", errorMessage: "boom", durationMs: 3 }),
      result("s1", "a", t, { model: "m-old" }),
      result("s1", "secret", t + 2, {
        arguments: JSON.stringify({ command: `export GITHUB_TOKEN=${GITHUB_TOKEN} && ls` }),
        result: `token: ${GITHUB_TOKEN}`,
      }),
      result("s1", "fetch", t + 3, {
        toolName: "WebFetch",
        category: "web_fetch",
        arguments: JSON.stringify({ url: "https://Docs.Example.com/page", prompt: "read" }),
      }),
      decision("s1", "x", t + 4, "reject"),
      decision("s1", "y", t + 5, "accept", { decisionSource: "config" }),
      sessionInfo("s2", "openai", t),
      modelCall("s2", "r1", t + 1),
      modelCall("s2", "r1", t + 1),
      modelCall("s1", "r2", t + 2, { providerName: "anthropic", costUsd: null }),
      modelCall("s1", "r3", t + 3),
      sessionInfo("s1", "", t + 4),
      decision("lonely", "z", t, "accept"),
    ],
  }, {
    sender: ORG_A,
    events: [
      result("s1", "x", t + 10, { durationMs: 42, model: "m-new" }),
      result("s1", "y", t + 11),
      result("s1", "b", t + 1, { outcome: "error", errorMessage: "boom", durationMs: 3 }),
      decision("s1", "a", t + 12, "accept", { decisionSource: "config" }),
      decision("s1", "fetch", t + 13, "reject"),
      modelCall("s3", "r4", t + 2, { model: "" }),
      decision("s3", "w", t + 3, "reject"),
      result("s3", "w", t + 4, { outcome: "error", decision: "reject", decisionSource: "hook" }),
      decision("s3", "v", t + 5, "reject", { toolName: "rm", arguments: "rm -rf ~/.ssh" }),
      result("s3", "v", t + 6),
      decision("s3", "v", t + 7, "accept"),
      result("s3", "v", t + 8),
      result("s3", "u", t + 9, { outcome: "rejected", durationMs: null, resultSizeBytes: null }),
      result("s3", "u", t + 10),
      sessionInfo("s3", "google", t + 11),
      modelCall("s3", "r5", t + 12, { costUsd: 0.5 }),
    ],
  }, {
    sender: ORG_B,
    events: [
      result("s1", "a", t - 5, { agentVersion: "", model: "other" }),
      result("s1", "c", t - 6, { agentVersion: "3.0" }),
      modelCall("s1", "r1", t, { providerName: "bedrock", costUsd: 1.125 }),
    ],
  }, {
    sender: ORG_A,
    events: [
      result("s1", "late", t - 100, { model: "m-early" }),
      result("lonely", "z", t + 20),
      decision("s2", "q", t + 21, "denied", { rejects: true, decisionSource: undefined }),
    ],
  }];
}

/** Realistic exports of all three agents, mapped by the real ingest path. */
function generatedBatches(options: { actors: number; days: number; seed: number }): Batch[] {
  const batches: Batch[] = [];
  const now = new Date(T0 + DAY);
  for (const e of generateExports({ ...options, now, batchRecords: 60 })) {
    const received = receiveExport(encodeJson(e.body), { encoding: "json", pathSignal: "logs" });
    batches.push({
      sender: { orgId: e.actor % 2 ? "org_b" : "org_A", actorId: `act_${e.actor}` },
      events: received.events,
    });
  }
  return batches;
}

/** A table's key: rows are compared in this order. */
const TABLES: Record<string, string> = {
  sessions: "org_id, session_id",
  "tool_calls": "id",
  decisions: "org_id, session_id, tool_call_id",
  "model_calls": "id",
  "risk_flags": "call_id, flag",
  "domain_hits": "call_id, domain, scheme",
};

function stripStamps(row: Row): Row {
  const { seq: _seq, txid: _txid, ...rest } = row;
  return rest;
}

/** Every telemetry row of a SQLite data directory, and its tombstones in seq order. */
function sqliteTables(dir: string): Record<string, Row[]> {
  const db = new DatabaseSync(dataPaths(dir).telemetry, { readOnly: true });
  try {
    const tables: Record<string, Row[]> = {};
    for (const [table, key] of Object.entries(TABLES)) {
      const rows = db.prepare(`SELECT * FROM ${table} ORDER BY ${key}`).all();
      tables[table] = rows.map((row) => stripStamps({ ...row }));
    }
    tables.tombstones = db.prepare("SELECT tbl, row_key FROM tombstones ORDER BY seq").all()
      .map((row) => ({ ...row }));
    return tables;
  } finally {
    db.close();
  }
}

/** The same from PostgreSQL. */
async function pgTables(sql: Sql): Promise<Record<string, Row[]>> {
  const tables: Record<string, Row[]> = {};
  for (const [table, key] of Object.entries(TABLES)) {
    const rows = await sql.unsafe<Row[]>(`SELECT * FROM ${table} ORDER BY ${key}`);
    tables[table] = Array.from(rows, (row) => stripStamps({ ...row }));
  }
  const tombstones = await sql.unsafe<Row[]>("SELECT tbl, row_key FROM tombstones ORDER BY seq");
  tables.tombstones = Array.from(tombstones, (row) => ({ ...row }));
  return tables;
}

function assertSameTables(actual: Record<string, Row[]>, expected: Record<string, Row[]>) {
  for (const table of Object.keys(expected)) {
    assert.deepEqual(actual[table], expected[table], `table ${table}`);
  }
}

/** A SQLite writer in a temporary data directory. */
function sqliteStore(options = { redactSecrets: true }) {
  const dir = Deno.makeTempDirSync();
  let store = openTelemetryWriter(dir, options);
  return {
    dir,
    get writer(): TelemetryWriter {
      return store.writer;
    },
    reopen(next: { redactSecrets: boolean }) {
      store.close();
      store = openTelemetryWriter(dir, next);
    },
    [Symbol.dispose]() {
      store.close();
      Deno.removeSync(dir, { recursive: true });
    },
  };
}

/** A migrated PostgreSQL test database, its pool and a writer. */
async function pgStore(db: TestDatabase, options = { redactSecrets: true }) {
  const sql = connectPostgres(db.url, { max: 4 });
  await migratePostgres(sql);
  const writers: PgTelemetryWriter[] = [];
  const writer = (next = options) => {
    const created = new PgTelemetryWriter(sql, { ...next, retention: RETENTION });
    writers.push(created);
    return created;
  };
  return {
    sql,
    writer: writer(),
    newWriter: writer,
    async [Symbol.asyncDispose]() {
      for (const created of writers) await created.close();
      await sql.end();
    },
  };
}

async function ingestBoth(
  batches: Batch[],
  sqlite: { writer: TelemetryWriter },
  pg: { writer: PgTelemetryWriter },
): Promise<void> {
  for (const [i, { sender, events }] of batches.entries()) {
    const expected: IngestSummary = sqlite.writer.ingest(sender, events);
    assert.deepEqual(await pg.writer.ingest(sender, events), expected, `summary of batch ${i}`);
  }
}

Deno.test({
  name: "the PostgreSQL writer stores the same rows as SQLite for the write path's edge cases",
  ignore,
  async fn() {
    await using db = await createTestDatabase();
    await using pg = await pgStore(db);
    using sqlite = sqliteStore();
    const batches = edgeCaseBatches();
    await ingestBoth(batches, sqlite, pg);
    const expected = sqliteTables(sqlite.dir);
    assert.ok(expected.risk_flags!.length >= 2 && expected.domain_hits!.length >= 1);
    assert.ok(expected.tombstones!.length >= 3, "replaced rejects leave tombstones");
    assert.ok(!JSON.stringify(expected.tool_calls).includes(GITHUB_TOKEN), "secret redacted");
    assertSameTables(await pgTables(pg.sql), expected);

    await ingestBoth(batches, sqlite, pg);
    assertSameTables(await pgTables(pg.sql), sqliteTables(sqlite.dir));
  },
});

Deno.test({
  name: "the PostgreSQL writer stores the same rows as SQLite for generated agent exports",
  ignore,
  async fn() {
    await using db = await createTestDatabase();
    await using pg = await pgStore(db);
    using sqlite = sqliteStore();
    const batches = generatedBatches({ actors: 4, days: 2, seed: 11 });
    await ingestBoth([...batches, ...batches.slice(0, 5)], sqlite, pg);
    const expected = sqliteTables(sqlite.dir);
    assert.ok(expected.tool_calls!.length > 300);
    assertSameTables(await pgTables(pg.sql), expected);
  },
});

Deno.test({
  name: "two writers on separate pools ingesting overlapping batches store what one would",
  ignore,
  async fn() {
    await using db = await createTestDatabase();
    await using first = await pgStore(db);
    await using second = await pgStore(db);
    using sqlite = sqliteStore();
    const batches: Batch[] = [];
    for (let i = 0; i < 60; i++) {
      const session = `s${i % 5}`;
      const t = T0 + i * 1000;
      batches.push({
        sender: ORG_A,
        events: [
          result(session, `call-${i}`, t, { model: `m${i}` }),
          result(`s${(i + 2) % 5}`, `call-${i}b`, t + 1, {
            outcome: i % 3 ? "ok" : "error",
          }),
          decision(session, `rej-${i}`, t + 2, "reject"),
          result(`s${(i + 2) % 5}`, `rej-${i - 3}`, t + 3),
          decision(session, `acc-${i}`, t + 4, "accept"),
          result(`s${(i + 4) % 5}`, `acc-${i - 1}`, t + 5),
          modelCall(`s${(i + 1) % 5}`, `r${i}`, t + 6, { costUsd: 0.125 * (i % 4) }),
        ],
      });
    }
    for (const batch of batches) sqlite.writer.ingest(batch.sender, batch.events);

    const ingestAll = async (writer: PgTelemetryWriter, list: Batch[], lanes: number) => {
      let next = 0;
      const lane = async () => {
        while (next < list.length) {
          const batch = list[next++]!;
          await writer.ingest(batch.sender, batch.events);
        }
      };
      await Promise.all(Array.from({ length: lanes }, lane));
    };
    await Promise.all([
      ingestAll(first.writer, batches.slice(0, 45), 3),
      ingestAll(second.writer, batches.slice(15).reverse(), 3),
    ]);

    const expected = sqliteTables(sqlite.dir);
    const actual = await pgTables(first.sql);
    for (const table of ["sessions", "tool_calls", "decisions", "model_calls"]) {
      assert.deepEqual(actual[table], expected[table], `table ${table}`);
    }
    assert.equal(actual.risk_flags!.length, expected.risk_flags!.length);
  },
});

Deno.test({
  name: "retention by age deletes the same rows as SQLite and leaves tombstones",
  ignore,
  async fn() {
    await using db = await createTestDatabase();
    await using pg = await pgStore(db);
    using sqlite = sqliteStore();
    const now = T0 + 200 * DAY;
    await ingestBoth(edgeCaseBatches(T0), sqlite, pg);
    await ingestBoth(edgeCaseBatches(now - DAY).map(renameSessions), sqlite, pg);
    await ingestBoth(
      [{
        sender: ORG_A,
        events: [result("s3", "recent", now - 2 * DAY), modelCall("s3", "recent", now - DAY)],
      }],
      sqlite,
      pg,
    );

    const path = dataPaths(sqlite.dir).telemetry;
    const sqliteDb = openDatabase(path);
    let expected;
    try {
      expected = await new Retention(sqliteDb, path, RETENTION).run(now);
    } finally {
      sqliteDb.close();
    }
    const actual = await pg.writer.runRetention(now);
    assert.deepEqual(actual, { ...expected, reclaimedBytes: 0 });
    assert.ok(expected.toolCalls > RETENTION.batchSize, "several batches ran");

    const { tombstones: sqliteStones, ...sqliteRows } = sqliteTables(sqlite.dir);
    const { tombstones: pgStones, ...pgRows } = await pgTables(pg.sql);
    assertSameTables(pgRows, sqliteRows);
    const sorted = (rows: Row[]) => rows.map((row) => JSON.stringify(row)).sort();
    assert.deepEqual(sorted(pgStones!), sorted(sqliteStones!), "tombstones in any order");
    const gone = pgStones!.filter((row) => row.tbl === "tool_calls").length;
    assert.equal(gone, expected.toolCalls);
    assert.ok(pg.writer.lastSeq > 0);
    const again = await pg.writer.runRetention(now);
    assert.deepEqual(again, { toolCalls: 0, modelCalls: 0, reclaimedBytes: 0 });
  },
});

function renameSessions(batch: Batch): Batch {
  return {
    ...batch,
    events: batch.events.map((event) => ({ ...event, sessionId: `new-${event.sessionId}` })),
  };
}

Deno.test({
  name: "rescanBatch walks, redacts and re-flags the same calls as SQLite's",
  ignore,
  async fn() {
    await using db = await createTestDatabase();
    await using pg = await pgStore(db, { redactSecrets: false });
    using sqlite = sqliteStore({ redactSecrets: false });
    await ingestBoth(
      [...edgeCaseBatches(), ...generatedBatches({ actors: 1, days: 1, seed: 5 })],
      sqlite,
      pg,
    );
    assert.ok(JSON.stringify(sqliteTables(sqlite.dir).tool_calls).includes(GITHUB_TOKEN));

    sqlite.reopen({ redactSecrets: true });
    const rescanner = pg.newWriter({ redactSecrets: true });
    for (let pass = 0; pass < 2; pass++) {
      let after = "";
      for (;;) {
        const expected = sqlite.writer.rescanBatch(after, 7);
        assert.deepEqual(await rescanner.rescanBatch(after, 7), expected);
        if (expected.lastId === null) break;
        after = expected.lastId;
      }
      const expected = sqliteTables(sqlite.dir);
      assert.ok(!JSON.stringify(expected.tool_calls).includes(GITHUB_TOKEN), "secret redacted");
      assert.ok(expected.risk_flags!.some((flag) => flag.flag === "credential_detected"));
      assertSameTables(await pgTables(pg.sql), expected);
    }
  },
});

Deno.test({
  name: "the PostgreSQL writer stores text holding U+0000 with U+FFFD in its place",
  ignore,
  async fn() {
    await using db = await createTestDatabase();
    await using pg = await pgStore(db);
    const events = [
      sessionInfo("s\u0000", "openai", T0),
      result("s\u0000", "nul", T0, { result: "a\u0000b", arguments: '{"command":"ls \\u0000"}' }),
    ];
    assert.deepEqual(await pg.writer.ingest(ORG_A, events), stored(1, 0));
    assert.deepEqual(await pg.writer.ingest(ORG_A, events), stored(0, 0));
    const more = [modelCall("s\u0000", "r", T0)];
    assert.deepEqual(await pg.writer.ingest(ORG_A, more), { ...stored(0, 1), costUsd: 0.25 });
    const [call] = await pg.sql.unsafe("SELECT session_id, result FROM tool_calls");
    assert.deepEqual({ ...call }, { session_id: "s\ufffd", result: "a\ufffdb" });
    const [model] = await pg.sql.unsafe("SELECT provider_name FROM model_calls");
    assert.equal(model!.provider_name, "openai", "the session's provider is still found");
  },
});

Deno.test({
  name: "close waits for ingest under way and refuses new work, leaving the pool open",
  ignore,
  async fn() {
    await using db = await createTestDatabase();
    await using pg = await pgStore(db);
    await pg.writer.probe();
    const pending = pg.writer.ingest(ORG_A, [result("s1", "a", T0), modelCall("s1", "r", T0)]);
    await pg.writer.close();
    assert.deepEqual(await pending, { ...stored(1, 1), costUsd: 0.25 });
    assert.ok(pg.writer.lastSeq > 0);
    await assert.rejects(pg.writer.ingest(ORG_A, [result("s1", "b", T0)]), /closed/);
    const [row] = await pg.sql.unsafe("SELECT count(*)::int AS n FROM tool_calls");
    assert.equal(row!.n, 1);
  },
});
