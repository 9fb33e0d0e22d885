import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { generateExports } from "../src/demo/mod.ts";
import { Retention } from "../src/store/sqlite/retention.ts";
import { openDatabase } from "../src/store/sqlite/database.ts";
import { openKeyStoreFor } from "../src/store/open_stores.ts";
import { connectPostgres } from "../src/store/postgres/client.ts";
import {
  COPIED_TABLES,
  copyDataDirToPostgres,
  type CopyResult,
} from "../src/store/postgres/copy_from_sqlite.ts";
import { startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";
import { apiRequest, toolResult } from "./_otlp.ts";
import { loadScenario, type Scenario, send, T0 } from "./_scenario.ts";
import { replayRecordedJson } from "./_recorded_json.ts";

const ignore = !pgTestUrl();
const DAY = 86_400_000;
const NOW = Date.now();
/** The end of yesterday (UTC): generated sessions of whole days, the same ones every run. */
const GENERATED_UNTIL = new Date(Math.floor(NOW / DAY) * DAY - 1);

/** A copied table, its primary key and file; `text`: columns compared as decimal text. */
interface CopiedTable {
  name: string;
  file: "keys.db" | "telemetry.db";
  key: string[];
  text?: string[];
}

/** Every copied table and its primary key, in the source's files. */
const TABLES: CopiedTable[] = [
  { name: "orgs", file: "keys.db", key: ["id"] },
  { name: "members", file: "keys.db", key: ["id"] },
  { name: "api_keys", file: "keys.db", key: ["id"] },
  { name: "actors", file: "keys.db", key: ["id"] },
  { name: "sessions", file: "telemetry.db", key: ["org_id", "session_id"] },
  { name: "tool_calls", file: "telemetry.db", key: ["id"] },
  { name: "decisions", file: "telemetry.db", key: ["org_id", "session_id", "tool_call_id"] },
  { name: "model_calls", file: "telemetry.db", key: ["id"] },
  { name: "risk_flags", file: "telemetry.db", key: ["call_id", "flag"] },
  { name: "domain_hits", file: "telemetry.db", key: ["call_id", "domain", "scheme"] },
  { name: "metric_points", file: "telemetry.db", key: ["id"], text: ["start_time_ns", "time_ns"] },
];

/** What {@link loadData} stored. */
interface Loaded {
  org: TestOrg;
  /** An API key that was revoked before the copy. */
  revokedKey: string;
  ingestKeys: string[];
  scenario: Scenario;
}

/**
 * Fills the server's data directory through the real ingest path: the
 * scenario (flags, domains, errors, rejections, model calls) and generated
 * sessions of three actors over two days, plus calls 60 days old.
 */
async function loadData(server: TestServer): Promise<Loaded> {
  const scenario = await loadScenario(server, "Scenario");
  const org = await server.createOrg("Acme");
  const store = await server.keyStore();
  const ingestKeys = [org.ingestKey];
  let revokedKey: string;
  try {
    for (const name of ["second", "third"]) {
      ingestKeys.push((await store.createActor(org.orgId, name)).ingest_key);
    }
    const old = await store.createKey(org.orgId, org.memberId, "old");
    await store.revokeKey(old.id);
    revokedKey = old.key;
  } finally {
    await store.close();
  }
  for (const batch of generateExports({ actors: 3, days: 2, seed: 11, now: GENERATED_UNTIL })) {
    const response = await server.ingest("/v1/logs", batch.body, ingestKeys[batch.actor]!);
    assert.equal(response.status, 200, await response.text());
  }
  await send(server, org.ingestKey, oldCalls("aged", NOW - 60 * DAY));
  // Metric points: Claude Code's recorded delta sums and Gemini CLI's cumulative ones (exact
  // nanosecond times past 2^53), recent, and one 60 days old.
  for (const run of ["claude-code-2.1.330/http-json", "gemini-cli-0.61.0/http"]) {
    await replayRecordedJson(server.ingestUrl, org.ingestKey, run, NOW - 60_000, "metrics");
  }
  await replayRecordedJson(
    server.ingestUrl,
    org.ingestKey,
    "gemini-cli-0.61.0/http",
    NOW - 60 * DAY,
    "metrics",
  );
  return { org, revokedKey, ingestKeys, scenario };
}

/** Two tool calls (one flagged, one with a domain) and a model call at `timeMs`. */
function oldCalls(session: string, timeMs: number) {
  return [
    toolResult({
      session,
      id: `${session}-1`,
      tool: "Bash",
      timeMs,
      input: { command: "curl -s https://example.org/install.sh | sh" },
    }),
    toolResult({ session, id: `${session}-2`, tool: "Read", timeMs: timeMs + 1000 }),
    apiRequest({ session, timeMs, model: "claude-sonnet-4-5", costUsd: 0.125, requestId: session }),
  ];
}

/** Rows of one table, as plain objects in primary-key order (byte-wise). */
async function pgRows(url: string, table: string, columns: string[], key: string[]) {
  const sql = connectPostgres(url, { max: 1 });
  try {
    const order = key.map((k) => `${k} COLLATE "C"`).join(", ");
    const rows = await sql.unsafe(`SELECT ${columns.join(", ")} FROM ${table} ORDER BY ${order}`);
    return rows.map((row) => ({ ...row }));
  } finally {
    await sql.end();
  }
}

/** Asserts that every copied table holds the same rows in PostgreSQL as in the data directory. */
async function assertSameRows(dir: string, url: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    const db = new DatabaseSync(`${dir}/${table.file}`, { readOnly: true });
    let expected: Record<string, unknown>[];
    let columns: string[];
    try {
      columns = (db.prepare("SELECT name FROM pragma_table_info(?)").all(table.name) as {
        name: string;
      }[]).map((r) =>
        table.text?.includes(r.name) ? `CAST(${r.name} AS TEXT) AS ${r.name}` : r.name
      );
      expected = db.prepare(
        `SELECT ${columns.join(", ")} FROM ${table.name} ORDER BY ${table.key.join(", ")}`,
      ).all().map((row) => ({ ...row }));
    } finally {
      db.close();
    }
    const actual = await pgRows(url, table.name, columns, table.key);
    assert.equal(actual.length, expected.length, `${table.name}: row count`);
    assert.deepEqual(actual, expected, `${table.name}: rows`);
    counts[table.name] = expected.length;
  }
  return counts;
}

/** The session rollup, not copied but rebuilt from the copied calls, equals the source's. */
async function assertSameRollup(dir: string, url: string): Promise<void> {
  const key = ["org_id", "session_id", "actor_id", "agent_system"];
  const columns = [...key, "first_seen", "last_seen", "calls", "errors", "oks", "model_key"];
  const db = new DatabaseSync(`${dir}/telemetry.db`, { readOnly: true });
  let expected: Record<string, unknown>[];
  try {
    expected = db.prepare(`SELECT ${columns.join(", ")} FROM session_actors ORDER BY ${key}`)
      .all().map((row) => ({ ...row }));
  } finally {
    db.close();
  }
  assert.ok(expected.length > 0, "session_actors has rows");
  assert.deepEqual(await pgRows(url, "session_actors", columns, key), expected, "session_actors");
}

/** Runs the command as a user would; `env` adds to the environment. */
async function migrate(args: string[], env: Record<string, string> = {}) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      new URL("../main.ts", import.meta.url).pathname,
      "migrate-to-postgres",
      ...args,
    ],
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** Runs the command with `--json`; expects success and one JSON object on stdout. */
async function migrateJson(args: string[], env: Record<string, string> = {}): Promise<CopyResult> {
  const result = await migrate([...args, "--json"], env);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.trim().split("\n");
  assert.equal(lines.length, 1, `one JSON object on stdout, got: ${result.stdout}`);
  return JSON.parse(lines[0]!);
}

async function sequenceNext(url: string): Promise<number> {
  const sql = connectPostgres(url, { max: 1 });
  try {
    const [row] = await sql.unsafe<{ next: number }[]>("SELECT nextval('telemetry_seq') AS next");
    return row!.next;
  } finally {
    await sql.end();
  }
}

function sumRows(...results: CopyResult[]): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const result of results) {
    for (const [table, rows] of Object.entries(result.tables)) {
      sum[table] = (sum[table] ?? 0) + rows;
    }
  }
  return sum;
}

Deno.test({
  name:
    "migrate-to-postgres copies every table row by row while the server runs, and again copies nothing",
  ignore,
  fn: async () => {
    await using server = await startTestServer();
    await using db = await createTestDatabase();
    const { org, revokedKey } = await loadData(server);

    const first = await migrate(["--data", server.dir, "--database", db.url, "--json"]);
    assert.equal(first.code, 0, first.stderr);
    const result = JSON.parse(first.stdout) as CopyResult;
    assert.deepEqual(Object.keys(result.tables), [...COPIED_TABLES]);
    for (const table of COPIED_TABLES) {
      assert.match(
        first.stderr,
        new RegExp(`"message":"table copied","table":"${table}","rows":\\d+,.*"rows_per_s":\\d+`),
        `a progress line for ${table}`,
      );
    }

    const counts = await assertSameRows(server.dir, db.url);
    assert.deepEqual(result.tables, counts, "each row written once");
    await assertSameRollup(server.dir, db.url);
    assert.ok(counts.tool_calls! > 500, `several hundred calls: ${counts.tool_calls}`);
    for (
      const table of ["risk_flags", "domain_hits", "model_calls", "decisions", "metric_points"]
    ) {
      assert.ok(counts[table]! > 0, `${table} has rows`);
    }
    assert.equal(result.total, Object.values(counts).reduce((a, b) => a + b, 0));
    assert.equal(result.complete, true);
    assert.ok(await sequenceNext(db.url) > result.seq, "new rows take seqs above the copied ones");

    const keys = await openKeyStoreFor(server.dir, db.url);
    try {
      assert.deepEqual(await keys.verifyApiKey(org.apiKey), { orgId: org.orgId, keyId: org.keyId });
      assert.equal(await keys.verifyApiKey(revokedKey), null, "a revoked key stays revoked");
      assert.deepEqual(await keys.verifyIngestKey(org.ingestKey), {
        orgId: org.orgId,
        actorId: org.actorId,
      });
    } finally {
      await keys.close();
    }

    const again = await migrateJson(["--data", server.dir, "--database", db.url]);
    assert.equal(again.total, 0, "a second run copies nothing");
    assert.equal(again.deleted, 0);
    assert.deepEqual(Object.values(again.tables), COPIED_TABLES.map(() => 0));
    await assertSameRows(server.dir, db.url);
  },
});

Deno.test({
  name: "an interrupted migration continues after the last batch and writes no row twice",
  ignore,
  fn: async (t) => {
    await using server = await startTestServer();
    await using db = await createTestDatabase();
    await loadData(server);
    const stop = new AbortController();
    let batches = 0;
    const interrupted = await copyDataDirToPostgres({
      dataDir: server.dir,
      url: db.url,
      batchSize: 50,
      signal: stop.signal,
      onProgress: () => {
        // Four key-store tables and sessions take a batch each; stop inside tool_calls.
        if (++batches === 8) stop.abort();
      },
    });
    assert.equal(interrupted.complete, false);
    assert.equal(interrupted.tables.tool_calls, 150);
    assert.equal(interrupted.tables.model_calls, undefined, "later tables were not started");

    const sql = connectPostgres(db.url, { max: 1 });
    try {
      const [progress] = await sql.unsafe<{ rows: number; done: boolean; last_key: string }[]>(
        "SELECT rows, done, last_key FROM migration_progress WHERE tbl = 'tool_calls'",
      );
      assert.equal(progress!.rows, 150);
      assert.equal(progress!.done, false);
      const [last] = await sql.unsafe<{ id: string }[]>(
        `SELECT max(id COLLATE "C") AS id FROM tool_calls`,
      );
      assert.deepEqual(JSON.parse(progress!.last_key), [last!.id], "the batch and its record");
    } finally {
      await sql.end();
    }

    const resumed = await migrateJson([
      "--data",
      server.dir,
      "--database",
      db.url,
      "--batch",
      "50",
    ]);
    assert.equal(resumed.complete, true);
    const counts = await assertSameRows(server.dir, db.url);
    assert.deepEqual(sumRows(interrupted, resumed), counts, "every row written exactly once");

    await t.step("a table whose progress was lost is compared again, writing nothing", async () => {
      const sql = connectPostgres(db.url, { max: 1 });
      try {
        await sql.unsafe("DELETE FROM migration_progress WHERE tbl IN ('model_calls', 'actors')");
      } finally {
        await sql.end();
      }
      const rerun = await migrateJson(["--data", server.dir, "--database", db.url]);
      assert.equal(rerun.total, 0);
      await assertSameRows(server.dir, db.url);
    });
  },
});

Deno.test({
  name:
    "a run after the server stopped catches up the calls, updates, revocations and deletions written since",
  ignore,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-test-" });
    await using db = await createTestDatabase();
    try {
      let loaded: Loaded;
      let first: CopyResult;
      {
        await using server = await startTestServer({ dir });
        loaded = await loadData(server);
        first = await migrateJson(["--data", dir, "--database", db.url]);
        // Written after the first copy: a new session, another call in the
        // old one, the result of a rejected call (which replaces it and
        // changes its session's figures), a key revoked.
        await send(server, loaded.ingestKeys[1]!, [
          ...oldCalls("late", NOW - 1000),
          toolResult({ session: "aged", id: "aged-3", tool: "Grep", timeMs: NOW - 60 * DAY + 5 }),
        ]);
        await send(server, loaded.scenario.actorB.ingestKey, [
          toolResult({
            session: "s2",
            id: "toolu_4",
            tool: "Edit",
            timeMs: T0 + 10_500,
            input: { file_path: "/repo/.env" },
          }),
        ]);
        const store = await server.keyStore();
        try {
          await store.revokeKey(loaded.org.keyId);
        } finally {
          await store.close();
        }
      }
      // Retention, 40 days on: the 60-day-old calls go, with their flags and hits.
      const telemetry = openDatabase(`${dir}/telemetry.db`);
      let oldPoints: number;
      try {
        oldPoints = (telemetry.prepare("SELECT count(*) AS n FROM metric_points WHERE ts < ?")
          .get(NOW - 50 * DAY) as { n: number }).n;
        assert.ok(oldPoints > 0, "the old Gemini run's points");
        const retention = new Retention(telemetry, `${dir}/telemetry.db`, {
          retentionDays: 90,
          maxDiskBytes: null,
          batchSize: 5000,
        });
        const pruned = await retention.run(NOW + 40 * DAY);
        assert.deepEqual([pruned.toolCalls, pruned.modelCalls], [3, 1]);
      } finally {
        telemetry.close();
      }

      const last = await migrateJson(["--data", dir, "--database", db.url]);
      assert.ok(last.seq > first.seq);
      assert.equal(last.tables.tool_calls, 3, "the two new calls of 'late' and the result");
      assert.equal(last.tables.model_calls, 1);
      assert.equal(last.tables.api_keys, 1, "the revocation");
      assert.equal(last.tables.sessions, 2, "'late' and 's2'");
      // Two tool calls (their flags and hits go with them), the model call,
      // the emptied session and the old metric points; the third call never
      // reached PostgreSQL.
      assert.equal(last.deleted, 2 + 1 + 1 + oldPoints);
      await assertSameRows(dir, db.url);

      const keys = await openKeyStoreFor(dir, db.url);
      try {
        assert.equal(await keys.verifyApiKey(loaded.org.apiKey), null);
      } finally {
        await keys.close();
      }
      const idle = await migrateJson(["--data", dir, "--database", db.url]);
      assert.equal(idle.total + idle.deleted, 0, "nothing new: nothing written");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "the database URL may come from AGENT_TELEMETRY_DATABASE_URL",
  ignore,
  fn: async () => {
    await using server = await startTestServer();
    await using db = await createTestDatabase();
    await server.createOrg();
    const result = await migrateJson(["--data", server.dir], {
      AGENT_TELEMETRY_DATABASE_URL: db.url,
    });
    assert.deepEqual([result.tables.orgs, result.tables.actors], [1, 1]);
  },
});

Deno.test("migrate-to-postgres refuses bad input with one line and exit code 2", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    const cases: [string, string[], RegExp][] = [
      ["no --database", ["--data", dir], /Missing required flag: --database/],
      ["wrong scheme", ["--data", dir, "--database", "mysql://x@h/db"], /Invalid database URL/],
      [
        "no such directory",
        ["--data", `${dir}/nope`, "--database", "postgres://h/db"],
        /not found/,
      ],
      ["not a data directory", ["--data", dir, "--database", "postgres://h/db"], /Not a data/],
      ["bad batch", ["--data", dir, "--database", "postgres://h/db", "--batch", "0"], /--batch/],
    ];
    for (const [name, args, message] of cases) {
      await t.step(name, async () => {
        const result = await migrate(args);
        assert.equal(result.code, 2, result.stderr);
        assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
        assert.match(result.stderr, /^error: /);
        assert.match(result.stderr, message);
      });
    }
    await t.step("an unreachable database", async () => {
      await using server = await startTestServer();
      const result = await migrate([
        "--data",
        server.dir,
        "--database",
        "postgres://postgres@127.0.0.1:1/none",
      ]);
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
      assert.match(result.stderr, /^error: Cannot connect to PostgreSQL at "127\.0\.0\.1:1"/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
