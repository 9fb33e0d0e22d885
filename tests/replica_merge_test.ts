/**
 * The replica's merge from SQLite (src/analytics/sqlite_source.ts): rows
 * stored after the last chunk read are inserted without a delete by key, the
 * rest replace their old copy found by (id, ts). Each test writes telemetry.db
 * with the statements the writer runs (sql/sqlite/ingest.sql, retention's
 * tombstones), so it decides which update lands in which catch-up, and checks
 * that the replica holds exactly the source's rows.
 */
import assert from "node:assert/strict";
import type { DatabaseSync } from "node:sqlite";
import { Replica } from "../src/analytics/replica.ts";
import { migrate, openDatabase } from "../src/store/sqlite/database.ts";
import { telemetryMigrations } from "../src/store/sqlite/migrations.ts";

interface Fixture extends AsyncDisposable {
  db: DatabaseSync;
  replica: Replica;
  /** Closes the replica and opens it again (a restart: the source forgets its rowids). */
  reopen(): Promise<void>;
}

async function fixture(): Promise<Fixture> {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-replica-merge-" });
  const path = `${dir}/telemetry.db`;
  const db = openDatabase(path);
  migrate(db, telemetryMigrations);
  const open = () =>
    Replica.open({
      path: `${dir}/analytics.duckdb`,
      source: { engine: "sqlite", path },
      quiet: true,
    });
  const fx: Fixture = {
    db,
    replica: await open(),
    async reopen() {
      await fx.replica.close();
      fx.replica = await open();
    },
    async [Symbol.asyncDispose]() {
      await fx.replica.close();
      db.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
  return fx;
}

/** Takes the next seq, as the writer does, and records it. */
function nextSeq(db: DatabaseSync): number {
  const row = db.prepare("UPDATE counters SET value = value + 1 WHERE name = 'seq' RETURNING value")
    .get() as { value: number };
  return Number(row.value);
}

/** The calls' keys (schema 15): org_a, s1 and act_1 are key 1 each. */
function addKeys(db: DatabaseSync): void {
  db.exec("INSERT OR IGNORE INTO org_keys (org_key, org_id) VALUES (1, 'org_a')");
  db.exec(
    "INSERT OR IGNORE INTO session_keys (session_key, org_key, session_id) VALUES (1, 1, 's1')",
  );
  db.exec("INSERT OR IGNORE INTO actor_keys (actor_key, org_key, actor_id) VALUES (1, 1, 'act_1')");
}

function insertCall(db: DatabaseSync, id: string, ts: number, outcome = "ok"): number {
  const seq = nextSeq(db);
  addKeys(db);
  db.prepare(
    `INSERT INTO calls (id, org_key, seq, session_key, actor_key, ts, tool_name, tool_type,
      category, outcome, agent_system, source)
    VALUES (?, 1, ?, 1, 1, ?, 'Bash', 'builtin', 'code_exec', ?, 'claude-code', 'otlp_logs')`,
  ).run(id, seq, ts, outcome);
  return seq;
}

function insertFlag(db: DatabaseSync, callId: string, flag: string, ts: number, seq: number): void {
  db.prepare(
    `INSERT OR IGNORE INTO risk_flags (call_id, flag, org_id, seq, session_id, ts, tool_call_id,
      tool_name, evidence)
    VALUES (?, ?, 'org_a', ?, 's1', ?, ?, 'Bash', 'x')`,
  ).run(callId, flag, seq, ts, callId);
}

function insertModelCall(db: DatabaseSync, id: string, ts: number): void {
  addKeys(db);
  db.prepare(
    `INSERT INTO keyed_model_calls (id, org_key, seq, session_key, actor_key, ts, agent_system,
      model)
    VALUES (?, 1, ?, 1, 1, ?, 'claude-code', 'm')`,
  ).run(id, nextSeq(db), ts);
}

/** ingest.sql's annotate_trace: the span of a call whose log is stored (same rowid, same ts). */
function annotateTrace(db: DatabaseSync, id: string): void {
  db.prepare("UPDATE calls SET trace_id = 't', span_id = 's', seq = ? WHERE id = ?")
    .run(nextSeq(db), id);
}

/** The writer's forgetDetections: flags and hits go, a `detections` tombstone stays. */
function forgetDetections(db: DatabaseSync, id: string): void {
  db.prepare("DELETE FROM risk_flags WHERE call_id = ?").run(id);
  // Schema 19: hits are keyed by their call's key (ingest.sql's delete_domain_hits).
  db.prepare(
    "DELETE FROM keyed_domain_hits WHERE call_key = (SELECT call_key FROM calls WHERE id = ?)",
  ).run(id);
  db.prepare("INSERT INTO tombstones (seq, tbl, row_key) VALUES (?, 'detections', ?)")
    .run(nextSeq(db), id);
}

/** ingest_batch.ts: a stored reject followed by the call's result (new row under the same id). */
function replaceReject(db: DatabaseSync, id: string, ts: number): void {
  db.exec("BEGIN");
  forgetDetections(db, id);
  db.prepare("DELETE FROM calls WHERE id = ?").run(id);
  const seq = insertCall(db, id, ts, "error");
  insertFlag(db, id, "destructive_command", ts, seq);
  db.exec("COMMIT");
}

/** Retention: the row goes, a `tool_calls` tombstone stays (its flags cascade). */
function retire(db: DatabaseSync, id: string): void {
  db.prepare("DELETE FROM calls WHERE id = ?").run(id);
  db.prepare("INSERT INTO tombstones (seq, tbl, row_key) VALUES (?, 'tool_calls', ?)")
    .run(nextSeq(db), id);
}

const CALLS = "SELECT id, seq, ts, outcome FROM tool_calls";
const FLAGS = "SELECT call_id, flag, seq, ts FROM risk_flags";
const MODEL_CALLS = "SELECT id, seq, ts FROM model_calls";

function sourceRows(db: DatabaseSync, sql: string): string[] {
  return db.prepare(sql).all().map((row) => Object.values(row).join("|")).sort();
}

/**
 * Sorted here, not by ORDER BY: DuckDB 1.5.5 answers a prepared statement that
 * sorts raw rows, run again after rows were appended, with damaged values in
 * the new rows (reproduced without the replica), and the read pool keeps
 * statements prepared.
 */
async function replicaRows(replica: Replica, sql: string): Promise<string[]> {
  const [rows] = await replica.read([{ sql, params: {} }], Date.now() + 30_000);
  return rows!.map((row) => Object.values(row).join("|")).sort();
}

/** Catches up and checks that the replica holds exactly the source's rows. */
async function assertCopied(fx: Fixture, step: string): Promise<void> {
  await fx.replica.catchUp();
  for (const sql of [CALLS, FLAGS, MODEL_CALLS]) {
    assert.deepEqual(await replicaRows(fx.replica, sql), sourceRows(fx.db, sql), `${step}: ${sql}`);
  }
}

/** A replica built with calls a, b (flagged) and a model call, then caught up once more. */
async function built(fx: Fixture): Promise<void> {
  insertCall(fx.db, "a", 1_000);
  insertFlag(fx.db, "b", "credential_detected", 2_000, insertCall(fx.db, "b", 2_000));
  insertModelCall(fx.db, "m1", 1_500);
  await assertCopied(fx, "first build");
  // Past the build (copied straight into the tables): from here on rows are merged.
  insertCall(fx.db, "c", 3_000);
  await assertCopied(fx, "first merge");
}

Deno.test("a call updated in place after it was copied replaces its copy, not beside it", async () => {
  await using fx = await fixture();
  await built(fx);
  insertCall(fx.db, "d", 4_000);
  annotateTrace(fx.db, "a");
  annotateTrace(fx.db, "c");
  await assertCopied(fx, "spans of copied calls among a new call");
  insertModelCall(fx.db, "m2", 5_000);
  await assertCopied(fx, "a new model call");
});

Deno.test("a reject replaced by its result leaves one row, the result, with only its flags", async () => {
  await using fx = await fixture();
  await built(fx);
  insertFlag(fx.db, "r", "credential_detected", 6_000, insertCall(fx.db, "r", 6_000, "rejected"));
  await assertCopied(fx, "the reject");
  // The result has another time: the old copy is not where the new row is.
  replaceReject(fx.db, "r", 9_000);
  insertCall(fx.db, "e", 9_500);
  await assertCopied(fx, "the result");
});

Deno.test("a reject and its result stored before one catch-up are copied as the result", async () => {
  await using fx = await fixture();
  await built(fx);
  insertCall(fx.db, "r", 6_000, "rejected");
  replaceReject(fx.db, "r", 7_000);
  await assertCopied(fx, "reject and result together");
});

Deno.test("a call retention deleted and stored again later is copied once", async () => {
  await using fx = await fixture();
  await built(fx);
  retire(fx.db, "b");
  await assertCopied(fx, "retention");
  insertCall(fx.db, "a2", 8_000);
  retire(fx.db, "a");
  insertFlag(fx.db, "a", "credential_detected", 8_500, insertCall(fx.db, "a", 8_500));
  await assertCopied(fx, "retired and stored again in one catch-up");
});

Deno.test("a rescan that drops a copied call's flags keeps the call", async () => {
  await using fx = await fixture();
  await built(fx);
  forgetDetections(fx.db, "b");
  insertCall(fx.db, "f", 9_000);
  await assertCopied(fx, "flags forgotten, call kept");
  annotateTrace(fx.db, "b");
  await assertCopied(fx, "the call updated later");
});

Deno.test("after a restart the replica merges updates before it knows the rowids again", async () => {
  await using fx = await fixture();
  await built(fx);
  await fx.reopen();
  annotateTrace(fx.db, "a");
  insertCall(fx.db, "g", 10_000);
  replaceReject(fx.db, "c", 11_000);
  await assertCopied(fx, "first catch-up after the restart");
  annotateTrace(fx.db, "g");
  insertCall(fx.db, "h", 12_000);
  await assertCopied(fx, "second catch-up after the restart");
});
