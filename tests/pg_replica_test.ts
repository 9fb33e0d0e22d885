/**
 * The analytics replica fed from PostgreSQL (docs/design.md §8): real PostgreSQL
 * (`AGENT_TELEMETRY_TEST_DATABASE_URL`), real DuckDB files. Rows are written
 * with plain SQL, so each test decides which transaction commits when.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { DuckDBInstance } from "@duckdb/node-api";
import {
  type CatchUpStats,
  INSIGHT_NAMES,
  insightWindow,
  openAnalytics,
} from "../src/analytics/mod.ts";
import { Replica } from "../src/analytics/replica.ts";
import { connectPostgres, type Sql, type TransactionSql } from "../src/store/postgres/client.ts";
import { migratePostgres } from "../src/store/postgres/migrate.ts";
import { parseNamedSql } from "../src/store/named_sql.ts";
import replicaSourceSql from "../sql/postgres/replica_source.sql" with { type: "text" };
import { createTestDatabase, pgTestUrl } from "./_pg.ts";
import {
  assertInsightEqual,
  generateTelemetry,
  type InsightsEnv,
  type InsightsOrg,
  startInsightsEnv,
} from "./_insights_reference.ts";

const ignore = !pgTestUrl();

/** A migrated test database and a directory for replica files. */
interface Fixture extends AsyncDisposable {
  url: string;
  sql: Sql;
  path: string;
}

async function fixture(): Promise<Fixture> {
  const db = await createTestDatabase();
  const sql = connectPostgres(db.url, { max: 4 });
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-pg-replica-" });
  const dispose = async () => {
    await sql.end();
    await db.drop();
    await Deno.remove(dir, { recursive: true });
  };
  try {
    await migratePostgres(sql);
  } catch (error) {
    await dispose();
    throw error;
  }
  return { url: db.url, sql, path: `${dir}/analytics.duckdb`, [Symbol.asyncDispose]: dispose };
}

/** A pool, a reserved connection or a transaction. */
type Db = Sql | TransactionSql;

function openReplica(url: string, path: string): Promise<Replica> {
  return Replica.open({ path, source: { engine: "postgres", url }, quiet: true });
}

/** Inserts one tool call (a fresh seq from the sequence) and returns that seq. */
async function insertToolCall(sql: Db, id: string, outcome = "ok"): Promise<number> {
  const [row] = await sql<{ seq: number }[]>`
    INSERT INTO tool_calls (id, org_id, seq, session_id, actor_id, ts, tool_name, tool_type,
      category, outcome, agent_system, source)
    VALUES (${id}, 'org_a', nextval('telemetry_seq'), 's1', 'act_1', ${Date.now()}, 'Bash',
      'builtin', 'code_exec', ${outcome}, 'claude-code', 'otlp_logs')
    RETURNING seq`;
  return row!.seq;
}

async function insertFlag(sql: Db, callId: string, flag: string, seq: number): Promise<void> {
  await sql`
    INSERT INTO risk_flags (call_id, flag, org_id, seq, session_id, ts, tool_call_id, tool_name,
      evidence)
    VALUES (${callId}, ${flag}, 'org_a', ${seq}, 's1', ${Date.now()}, ${callId},
      'Bash', 'x')`;
}

async function nextSeq(sql: Db): Promise<number> {
  const [row] = await sql<{ seq: number }[]>`SELECT nextval('telemetry_seq') AS seq`;
  return row!.seq;
}

async function tombstone(sql: Db, tbl: string, rowKey: string): Promise<void> {
  await sql`
    INSERT INTO tombstones (seq, tbl, row_key)
    VALUES (nextval('telemetry_seq'), ${tbl}, ${rowKey})`;
}

/** Rows of one replica table, as "key" or "key=value" strings in order. */
async function replicaRows(replica: Replica, sql: string): Promise<string[]> {
  const [rows] = await replica.read([{ sql, params: {} }], Date.now() + 30_000);
  return rows!.map((row) => Object.values(row).join("="));
}

const toolCallIds = (replica: Replica) =>
  replicaRows(replica, "SELECT id FROM tool_calls ORDER BY id");

/** Rewrites meta rows of a closed replica file (to stage what a crash or a restore leaves). */
async function setMeta(path: string, values: Record<string, string | null>): Promise<void> {
  const instance = await DuckDBInstance.create(path);
  const connection = await instance.connect();
  try {
    for (const [key, value] of Object.entries(values)) {
      await connection.run("UPDATE meta SET value = $value WHERE key = $key", { key, value });
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function readMeta(path: string): Promise<Record<string, string | null>> {
  const instance = await DuckDBInstance.create(path);
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll("SELECT key, value FROM meta");
    return Object.fromEntries(reader.getRows().map(([k, v]) => [String(k), v as string | null]));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

Deno.test({
  name: "a row whose transaction commits after a later seq's is still copied",
  ignore,
  async fn() {
    await using fx = await fixture();
    const replica = await openReplica(fx.url, fx.path);
    const early = await fx.sql.reserve();
    try {
      await early`BEGIN`;
      const seqA = await insertToolCall(early, "call_a");
      const seqB = await insertToolCall(fx.sql, "call_b");
      assert.ok(seqA < seqB, "A holds the lower seq");
      // Many transactions after A's, so that A's is read apart from the rest.
      for (let i = 0; i < 200; i++) await fx.sql`SELECT pg_current_xact_id()`;
      await replica.catchUp();
      assert.deepEqual(await toolCallIds(replica), ["call_b"], "A is still open");
      await early`COMMIT`;
      await replica.catchUp();
      assert.deepEqual(await toolCallIds(replica), ["call_a", "call_b"]);
      assert.equal(replica.lastCatchUp?.rows, 1, "B is not copied again");
    } finally {
      early.release();
      await replica.close();
    }
  },
});

Deno.test({
  name: "an aborted transaction leaves nothing in the replica and holds nothing back",
  ignore,
  async fn() {
    await using fx = await fixture();
    const replica = await openReplica(fx.url, fx.path);
    const aborted = await fx.sql.reserve();
    try {
      await aborted`BEGIN`;
      await insertToolCall(aborted, "call_aborted");
      await insertToolCall(fx.sql, "call_d");
      await replica.catchUp();
      assert.deepEqual(await toolCallIds(replica), ["call_d"]);
      await aborted`ROLLBACK`;
      await insertToolCall(fx.sql, "call_e");
      await replica.catchUp();
      assert.deepEqual(await toolCallIds(replica), ["call_d", "call_e"]);
    } finally {
      aborted.release();
      await replica.close();
    }
  },
});

Deno.test({
  name: "updates are copied again, tombstones delete, and a quiet catch-up copies nothing",
  ignore,
  async fn() {
    await using fx = await fixture();
    await insertToolCall(fx.sql, "call_1");
    await insertToolCall(fx.sql, "call_2");
    await insertToolCall(fx.sql, "call_3");
    await insertFlag(fx.sql, "call_2", "destructive_command", await nextSeq(fx.sql));
    await insertFlag(fx.sql, "call_3", "secret_access", await nextSeq(fx.sql));
    const replica = await openReplica(fx.url, fx.path);
    try {
      await replica.catchUp();
      assert.equal(replica.lastCatchUp?.rows, 5);
      const flags = () =>
        replicaRows(replica, "SELECT call_id, flag FROM risk_flags ORDER BY 1, 2");

      await fx.sql`UPDATE tool_calls SET outcome = 'error', seq = nextval('telemetry_seq')
        WHERE id = 'call_1'`;
      await fx.sql.begin(async (tx) => {
        await tx`DELETE FROM tool_calls WHERE id = 'call_2'`;
        await tombstone(tx, "tool_calls", "call_2");
      });
      // A reject replaced by its result: the tombstone takes a seq above that
      // of the flag stored again after it, yet the new flag stays.
      await fx.sql.begin(async (tx) => {
        const flagSeq = await nextSeq(tx);
        await tx`DELETE FROM risk_flags WHERE call_id = 'call_3'`;
        await tombstone(tx, "detections", "call_3");
        await insertFlag(tx, "call_3", "network_egress", flagSeq);
      });
      await replica.catchUp();
      assert.deepEqual(
        await replicaRows(replica, "SELECT id, outcome FROM tool_calls ORDER BY id"),
        ["call_1=error", "call_3=ok"],
      );
      assert.deepEqual(await flags(), ["call_3=network_egress"]);

      const before = replica.lastCatchUp;
      await replica.catchUp();
      const after: CatchUpStats | null = replica.lastCatchUp;
      assert.ok(after === before || after?.rows === 0, JSON.stringify(after));
      assert.deepEqual(await flags(), ["call_3=network_egress"]);
    } finally {
      await replica.close();
    }
  },
});

Deno.test({
  name: "a reopened replica resumes from its recorded snapshot",
  ignore,
  async fn() {
    await using fx = await fixture();
    await insertToolCall(fx.sql, "call_1");
    let replica = await openReplica(fx.url, fx.path);
    await replica.catchUp();
    const seq = replica.lastSeq;
    await replica.close();
    assert.equal(seq, 1, "the sequence's value before the snapshot");
    assert.match(String((await readMeta(fx.path)).mark), /^\d+:\d+:/);

    await insertToolCall(fx.sql, "call_2");
    replica = await openReplica(fx.url, fx.path);
    try {
      assert.equal(replica.rebuildReason, null);
      assert.equal(replica.lastSeq, seq);
      await replica.catchUp();
      assert.equal(replica.lastCatchUp?.rows, 1, "only the new row");
      assert.equal(replica.lastCatchUp?.fromSeq, 1);
      assert.equal(replica.lastSeq, 2);
      assert.deepEqual(await toolCallIds(replica), ["call_1", "call_2"]);
    } finally {
      await replica.close();
    }
  },
});

Deno.test({
  name: "a catch-up that stopped before recording its snapshot is repeated without duplicates",
  ignore,
  async fn(t) {
    await using fx = await fixture();
    await insertToolCall(fx.sql, "call_1");
    await insertFlag(fx.sql, "call_1", "secret_access", await nextSeq(fx.sql));
    let replica = await openReplica(fx.url, fx.path);
    await replica.catchUp();
    await replica.close();
    const firstMark = (await readMeta(fx.path)).mark!;

    await insertToolCall(fx.sql, "call_2");
    await fx.sql.begin(async (tx) => {
      await tx`DELETE FROM tool_calls WHERE id = 'call_1'`;
      await tombstone(tx, "tool_calls", "call_1");
    });
    replica = await openReplica(fx.url, fx.path);
    await replica.catchUp();
    await replica.close();
    const expected = ["call_2"];

    await t.step("an incremental catch-up", async () => {
      // Its rows were committed, its snapshot not: the old mark is still there.
      await setMeta(fx.path, { mark: firstMark });
      replica = await openReplica(fx.url, fx.path);
      try {
        await replica.catchUp();
        assert.equal(replica.lastCatchUp?.rows, 2, "call_2 and the tombstone, again");
        assert.deepEqual(await toolCallIds(replica), expected);
        assert.deepEqual(await replicaRows(replica, "SELECT call_id FROM risk_flags"), []);
      } finally {
        await replica.close();
      }
    });
    await t.step("a first build", async () => {
      await setMeta(fx.path, { mark: null, last_seq: "0" });
      replica = await openReplica(fx.url, fx.path);
      try {
        await replica.catchUp();
        assert.equal(replica.lastCatchUp?.fromSeq, 0);
        assert.deepEqual(await toolCallIds(replica), expected);
      } finally {
        await replica.close();
      }
    });
  },
});

Deno.test({
  name: "a replica of another database, or ahead of this one, is rebuilt",
  ignore,
  async fn(t) {
    await using fx = await fixture();
    await using other = await fixture();
    await insertToolCall(fx.sql, "call_here");
    await insertToolCall(other.sql, "call_there");
    let replica = await openReplica(fx.url, fx.path);
    await replica.catchUp();
    await replica.close();

    await t.step("another database", async () => {
      replica = await openReplica(other.url, fx.path);
      try {
        assert.match(String(replica.rebuildReason), /^replica of "postgres:\d+\/\d+", not of/);
        await replica.catchUp();
        assert.deepEqual(await toolCallIds(replica), ["call_there"]);
      } finally {
        await replica.close();
      }
    });
    await t.step("a snapshot the database has not reached (restored from a backup)", async () => {
      await setMeta(fx.path, { mark: "99999999999:99999999999:" });
      replica = await openReplica(other.url, fx.path);
      try {
        assert.match(String(replica.rebuildReason), /is ahead of the database/);
        await replica.catchUp();
        assert.deepEqual(await toolCallIds(replica), ["call_there"]);
      } finally {
        await replica.close();
      }
    });
  },
});

// ---------------------------------------------------------------------------
// Insights over a PostgreSQL-fed replica equal those over a SQLite-fed one
// ---------------------------------------------------------------------------

const COPIED_TABLES = ["tool_calls", "model_calls", "risk_flags", "domain_hits"];

/**
 * Copies rows of `telemetry.db` with seq in (lo, hi] into PostgreSQL (the
 * columns both share) and moves the sequence on to `hi`.
 */
async function copyFromSqlite(
  telemetryPath: string,
  sql: Sql,
  lo: number,
  hi: number,
): Promise<number> {
  const db = new DatabaseSync(telemetryPath, { readOnly: true });
  let copied = 0;
  try {
    for (const table of COPIED_TABLES) {
      const pgColumns = new Set(
        (await sql<{ name: string }[]>`
          SELECT column_name AS name FROM information_schema.columns
          WHERE table_name = ${table}`).map((row) => row.name),
      );
      const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[])
        .map((column) => column.name).filter((name) => pgColumns.has(name));
      const rows = db.prepare(`SELECT * FROM ${table} WHERE seq > ? AND seq <= ?`)
        .all(lo, hi) as Record<string, string | number | null>[];
      for (let i = 0; i < rows.length; i += 1000) {
        await sql`INSERT INTO ${sql(table)} ${sql(rows.slice(i, i + 1000), columns)}`;
      }
      copied += rows.length;
    }
  } finally {
    db.close();
  }
  await sql`SELECT setval('telemetry_seq', ${hi})`;
  return copied;
}

async function assertSameInsights(
  env: InsightsEnv,
  pg: Awaited<ReturnType<typeof openAnalytics>>,
  orgs: InsightsOrg[],
): Promise<void> {
  const now = Date.now();
  for (const org of orgs) {
    for (const name of INSIGHT_NAMES) {
      for (const [window, granularity] of [["7d", "daily"], ["90d", "weekly"]] as const) {
        const range = insightWindow(window, granularity, now);
        const expected = await env.analytics.insight(name, org.orgId, range);
        const actual = await pg.insight(name, org.orgId, range);
        assertInsightEqual(actual, expected, `${org.orgId} ${name} ${window} ${granularity}`);
      }
    }
  }
}

Deno.test({
  name: "insights over the PostgreSQL-fed replica equal those over the SQLite-fed one",
  ignore,
  async fn() {
    await using fx = await fixture();
    await using env = await startInsightsEnv();
    const acme = await env.createOrg("Acme");
    const globex = await env.createOrg("Globex");
    const now = Date.now();
    const big = generateTelemetry({ seed: 5, sessions: 300, days: 100, now, variety: 60 });
    const small = generateTelemetry({ seed: 6, sessions: 60, days: 100, now, prefix: "g" });
    for (const batch of big.batches) await env.ingest(acme, batch);
    for (const batch of small.batches) await env.ingest(globex, batch);
    await env.analytics.catchUp();
    const half = env.analytics.lastSeq;
    const telemetryPath = env.telemetryPath!;
    assert.ok(await copyFromSqlite(telemetryPath, fx.sql, 0, half) > 1000);

    const pg = await openAnalytics({
      path: fx.path,
      source: { engine: "postgres", url: fx.url },
      timeoutMs: 30_000,
      quiet: true,
    });
    try {
      await pg.ready;
      const activity = await pg.insight("activity", acme.orgId, insightWindow("90d", "daily", now));
      assert.ok(Number(activity.summary.total_calls) > 1000, JSON.stringify(activity.summary));
      await assertSameInsights(env, pg, [acme, globex]);

      // Results replacing stored rejects: SQLite deletes their flags and
      // hits; here the same deletions, with tombstones, in one transaction.
      await env.ingest(acme, big.laterResults);
      await env.analytics.catchUp();
      const replaced = new DatabaseSync(telemetryPath, { readOnly: true });
      const removed = replaced.prepare(
        "SELECT tbl, row_key FROM tombstones WHERE seq > ? ORDER BY seq",
      ).all(half) as { tbl: string; row_key: string }[];
      const updated = replaced.prepare("SELECT id FROM tool_calls WHERE seq > ?").all(half)
        .map((row) => String(row.id));
      replaced.close();
      assert.ok(removed.length > 0 && updated.length > 0);
      await fx.sql.begin(async (tx) => {
        for (const table of COPIED_TABLES.slice(2)) {
          await tx`DELETE FROM ${tx(table)} WHERE call_id IN ${tx(updated)}`;
        }
        await tx`DELETE FROM tool_calls WHERE id IN ${tx(updated)}`;
        for (const row of removed) await tombstone(tx, row.tbl, row.row_key);
      });
      await copyFromSqlite(telemetryPath, fx.sql, half, env.analytics.lastSeq);
      await pg.catchUp();
      assert.ok((pg.lastCatchUp?.fromSeq ?? 0) > 0, "incremental");
      await assertSameInsights(env, pg, [acme, globex]);
    } finally {
      await pg.close();
    }
  },
});

Deno.test({
  name: "the catch-up pages walk the (txid, seq) indexes in numeric order, with no sort",
  ignore,
  async fn() {
    await using fx = await fixture();
    const queries = parseNamedSql(replicaSourceSql);
    await fx.sql.begin(async (tx) => {
      // Judge the plans as they would be on a big table.
      await tx.unsafe("SET LOCAL enable_seqscan = off");
      await tx.unsafe("SET LOCAL enable_bitmapscan = off");
      for (const name of ["nth_tool_call_key", "nth_model_call_key", "tombstones_page"]) {
        const params = ["1:1:", "0", 0, "999999999", 9_000_000_000, 100];
        const rows = await tx.unsafe(`EXPLAIN ${queries[name]}`, params);
        const plan = rows.map((row) => String(row["QUERY PLAN"])).join("\n");
        assert.match(plan, /Index (Only )?Scan using \w+_by_txid/, `${name}:\n${plan}`);
        // Ordering by the text output column would sort "1000" before "999".
        assert.doesNotMatch(plan, /Sort/, `${name}:\n${plan}`);
      }
    });
  },
});
