import assert from "node:assert/strict";
import { encodeJson, generateExports } from "../src/demo/mod.ts";
import { receiveExport } from "../src/ingest/receive.ts";
import { openTelemetryWriter } from "../src/store/sqlite/data_dir.ts";
import { connectPostgres, numberPlaceholders, type Sql } from "../src/store/postgres/client.ts";
import { migratePostgres } from "../src/store/postgres/migrate.ts";
import { PgReader, postgresQueries } from "../src/store/postgres/reader.ts";
import { QueryFailedError, QueryQueueFullError, QueryTimeoutError } from "../src/errors.ts";
import { ReaderPool, sqliteQueries } from "../src/store/sqlite/reader.ts";
import { openDatabase } from "../src/store/sqlite/database.ts";
import type {
  CallFilters,
  FacetName,
  PageKey,
  ReadStatement,
  SessionFilters,
  TelemetryQueries,
} from "../src/store/telemetry_queries.ts";
import { apiRequest, claudeExport, toolDecision, toolResult } from "./_otlp.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";

const ignore = !pgTestUrl();

type Row = Record<string, unknown>;

const NOW = new Date("2026-11-22T12:00:00Z");
const T = Date.UTC(2026, 10, 21, 9);

/** Actor ids in two organizations, some of whose names sort differently byte-wise. */
function senderOf(actor: number) {
  return {
    orgId: actor % 2 === 0 ? "org_A" : "org_b",
    actorId: actor % 3 === 0 ? `Act-${actor}` : `act_${actor}`,
  };
}

/**
 * Calls that tie on time (within a session and across sessions, which also
 * end at the same moment), under names a locale would order differently from
 * bytes: case, punctuation and non-ASCII.
 */
function tiesAndNames(): unknown[] {
  const records: unknown[] = [];
  const tools = ["bash", "Bash", "Édit", "_scratch", "mcp__Ünicode__look", "zed", "WebFetch"];
  const urls = [
    "https://a-b.example.com/x",
    "https://ab.example.com/y",
    "https://Zeta.example.org",
  ];
  for (const [s, session] of ["tie-A", "Tie-b", "tie_c", "tïe-d"].entries()) {
    tools.forEach((tool, i) => {
      records.push(toolResult({
        session,
        id: `toolu_${s}_${i}`,
        tool,
        timeMs: i < 4 ? T : T + 1000,
        success: i % 3 !== 1,
        error: i % 3 === 1 ? "failed" : undefined,
        input: tool === "WebFetch" ? { url: urls[s % urls.length], prompt: "read" } : undefined,
      }));
    });
    records.push(
      toolDecision({ session, id: `toolu_${s}_r`, tool: "Bash", timeMs: T, decision: "reject" }),
      apiRequest({
        session,
        timeMs: T,
        model: "claude-opus-4-1",
        costUsd: 0.1,
        requestId: session,
      }),
    );
  }
  return records;
}

/** Fills `telemetry.db` of `dir` through the real mapping and the SQLite writer. */
function fillSqlite(dir: string): void {
  const store = openTelemetryWriter(dir, { redactSecrets: true });
  try {
    const options = { encoding: "json", pathSignal: "logs" } as const;
    for (const e of generateExports({ actors: 8, days: 4, seed: 7, now: NOW })) {
      store.writer.ingest(senderOf(e.actor), receiveExport(encodeJson(e.body), options).events);
    }
    const ties = receiveExport(encodeJson(claudeExport(tiesAndNames())), options);
    store.writer.ingest(senderOf(0), ties.events);
    store.writer.ingest(senderOf(3), ties.events);
  } finally {
    store.close();
  }
}

/** Tables in an order their foreign keys accept. */
const TABLES = [
  "sessions",
  "tool_calls",
  "decisions",
  "model_calls",
  "risk_flags",
  "domain_hits",
  "tombstones",
  "session_actors",
];

/** Copies every telemetry row of `telemetry.db` into PostgreSQL with multi-row inserts. */
async function copyToPostgres(path: string, sql: Sql): Promise<void> {
  const db = openDatabase(path, { readOnly: true });
  try {
    for (const table of TABLES) {
      const rows = db.prepare(`SELECT * FROM ${table}`).all() as Row[];
      if (rows.length === 0) continue;
      const columns = Object.keys(rows[0]!);
      const tuple = `(${columns.map(() => "?").join(", ")})`;
      for (let i = 0; i < rows.length; i += 500) {
        const chunk = rows.slice(i, i + 500);
        const insert = `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${
          chunk.map(() => tuple).join(", ")
        }`;
        const values = chunk.flatMap((row) => columns.map((c) => row[c] as string | number | null));
        await sql.unsafe(numberPlaceholders(insert), values);
      }
    }
  } finally {
    db.close();
  }
  await sql.unsafe("ANALYZE");
}

/**
 * The same telemetry in `telemetry.db` and in PostgreSQL. The database's own
 * collation is a locale's (en-US, as on most servers), so that byte order on
 * PostgreSQL has to come from the schema.
 */
async function withBothEngines(
  fn: (engines: { sqlite: ReaderPool; pg: PgReader; path: string }) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  await using database = await createTestDatabase({ icuLocale: "en-US" });
  const pgSql = connectPostgres(database.url, { max: 4 });
  const path = `${dir}/telemetry.db`;
  let sqlite: ReaderPool | null = null;
  try {
    fillSqlite(dir);
    await migratePostgres(pgSql);
    await copyToPostgres(path, pgSql);
    sqlite = new ReaderPool({ path, threads: 2, timeoutMs: 30_000 });
    await fn({ sqlite, pg: new PgReader(pgSql, { timeoutMs: 30_000, maxConcurrent: 4 }), path });
  } finally {
    sqlite?.close();
    await pgSql.end();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Facts of the SQLite data the statement table draws its filter values from. */
function dataFacts(path: string, orgId: string) {
  const db = openDatabase(path, { readOnly: true });
  try {
    const strings = (sql: string) =>
      (db.prepare(sql).all(orgId) as { value: string }[]).map((row) => row.value);
    const { calls, min, max } = db.prepare(
      "SELECT count(*) AS calls, min(ts) AS min, max(ts) AS max FROM tool_calls WHERE org_id = ?",
    ).get(orgId) as { calls: number; min: number; max: number };
    const third = Math.round((max - min) / 3);
    return {
      calls,
      sessions: strings("SELECT session_id AS value FROM sessions WHERE org_id = ?"),
      callIds: strings("SELECT id AS value FROM tool_calls WHERE org_id = ? ORDER BY id"),
      actors: strings("SELECT DISTINCT actor_id AS value FROM tool_calls WHERE org_id = ?"),
      busiest: strings(
        "SELECT session_id AS value FROM tool_calls WHERE org_id = ? GROUP BY 1 ORDER BY count(*) DESC",
      )[0]!,
      window: { after: min + third, before: max - third },
    };
  } finally {
    db.close();
  }
}

/** Call filters alone and combined; the session list takes each plus domains. */
function callFilterTable(
  facts: { actors: string[]; busiest: string; window: { after: number; before: number } },
): [string, CallFilters][] {
  const [actor, other] = facts.actors;
  const { after, before } = facts.window;
  return [
    ["no filter", {}],
    ["after", { after }],
    ["before", { before }],
    ["time window", { after, before }],
    ["agent", { agent: "codex_cli_rs" }],
    ["actor", { actor }],
    ["team", { team: [actor!, other!] }],
    ["session", { sessionId: facts.busiest }],
    ["tool name", { toolName: "Bash" }],
    ["tool name only in ties", { toolName: "Édit" }],
    ["tool type", { toolType: "mcp" }],
    ["category", { category: "file_read" }],
    ["outcome error", { outcome: "error" }],
    ["outcome rejected", { outcome: "rejected" }],
    ["agent, outcome and time", { agent: "claude-code", outcome: "ok", after }],
    ["actor, tool type and before", { actor, toolType: "builtin", before }],
    ["team and category", { team: [other!], category: "code_exec" }],
    ["matching nothing", { toolName: "no-such-tool" }],
  ];
}

const FACETS: FacetName[] = ["agents", "domains", "tool_names", "tool_types", "categories"];

Deno.test({
  name: "PgReader returns the rows ReaderPool returns for every list, detail and facet statement",
  ignore,
  async fn(t) {
    await withBothEngines(async ({ sqlite, pg, path }) => {
      /** Runs the statements `build` makes on both engines and expects the same rows. */
      const same = async (build: (q: TelemetryQueries) => ReadStatement[], label: string) => {
        const [expected, actual] = await Promise.all([
          sqlite.read(build(sqliteQueries)),
          pg.read(build(postgresQueries)),
        ]);
        assert.deepStrictEqual(actual, expected, label);
        return expected;
      };
      /** Walks every page of a list; resolves with the rows seen. */
      const walk = async (
        page: (q: TelemetryQueries, after: PageKey | null) => ReadStatement,
        keyOf: (row: Row) => PageKey,
        limit: number,
        label: string,
      ) => {
        let after: PageKey | null = null;
        let seen = 0;
        for (let n = 1;; n++) {
          const [rows] = await same((q) => [page(q, after)], `${label}, page ${n}`) as Row[][];
          seen += Math.min(rows!.length, limit);
          if (rows!.length <= limit) return seen;
          after = keyOf(rows![limit - 1]!);
        }
      };
      const callKey = (row: Row): PageKey => [row.ts as number, row.id as string];
      const sessionKey = (row: Row): PageKey => [row.last_seen as number, row.session_id as string];

      for (const orgId of ["org_A", "org_b"]) {
        const facts = dataFacts(path, orgId);
        const filters = callFilterTable(facts);

        await t.step(`${orgId}: facets`, async () => {
          const values = await same((q) => FACETS.map((name) => q.facet(orgId, name)), "facets");
          assert.ok(values.every((rows) => rows.length > 0), JSON.stringify(values));
        });

        await t.step(`${orgId}: tool call pages, each filter alone and combined`, async () => {
          for (const [name, filter] of filters) {
            const limit = name === "no filter" ? 97 : 13;
            const seen = await walk(
              (q, after) => q.toolCallsPage(orgId, filter, after, limit),
              callKey,
              limit,
              `tool calls, ${name}`,
            );
            if (name === "no filter") assert.equal(seen, facts.calls);
            else if (name !== "matching nothing") assert.ok(seen > 0, `tool calls, ${name}`);
          }
        });

        await t.step(`${orgId}: session pages, each filter alone and combined`, async () => {
          const sessionFilters: [string, SessionFilters][] = [
            ...filters,
            ["domain", { domain: "api.github.com" }],
            ["domain only in ties", { domain: "a-b.example.com" }],
            ["domain and actor", { domain: "api.github.com", actor: facts.actors[0] }],
          ];
          for (const [name, filter] of sessionFilters) {
            const seen = await walk(
              (q, after) => q.sessionsPage(orgId, filter, after, 3),
              sessionKey,
              3,
              `sessions, ${name}`,
            );
            if (name === "no filter") assert.equal(seen, facts.sessions.length);
            else if (name !== "matching nothing") assert.ok(seen > 0, `sessions, ${name}`);
          }
        });

        await t.step(`${orgId}: every session's detail, and unknown ones`, async () => {
          const otherOrg = orgId === "org_A" ? "org_b" : "org_A";
          for (const sessionId of [...facts.sessions, "no-such-session"]) {
            await same((q) => q.sessionDetail(orgId, sessionId), `session ${sessionId}`);
            await same(
              (q) => q.sessionDetail(otherOrg, sessionId),
              `session ${sessionId} elsewhere`,
            );
          }
        });

        await t.step(`${orgId}: tool call details`, async () => {
          const ids = facts.callIds.filter((_, i) => i % 37 === 0);
          for (const id of [...ids, "tc_missing"]) {
            await same((q) => [q.toolCallDetail(orgId, id)], `tool call ${id}`);
          }
        });
      }

      await t.step("an unknown organization has empty facets and lists", async () => {
        const results = await same(
          (q) => [
            ...FACETS.map((name) => q.facet("org_none", name)),
            q.toolCallsPage("org_none", {}, null, 10),
            q.sessionsPage("org_none", {}, null, 10),
          ],
          "unknown organization",
        );
        assert.ok(results.every((rows) => rows.length === 0));
      });
    });
  },
});

/** The plan PostgreSQL picks for a statement, as text. */
async function plan(sql: Sql, statement: ReadStatement): Promise<string> {
  const rows = await sql.unsafe(numberPlaceholders(`EXPLAIN ${statement.sql}`), statement.params);
  return (rows as Row[]).map((row) => row["QUERY PLAN"]).join("\n");
}

/** Reads `table` through an index, in the order asked for: no scan of the table, no sort. */
function assertIndexOrdered(detail: string, table: string, index = "\\w+") {
  assert.match(detail, new RegExp(`Index Scan (Backward )?using ${index} on ${table}`), detail);
  assert.doesNotMatch(detail, new RegExp(`Seq Scan on ${table}`), detail);
  assert.doesNotMatch(detail, /Sort/, detail);
}

/**
 * A tool-call index holds the filter's key and the time, not the call id
 * (sql/postgres/0008_narrow_call_indexes.sql): the index gives the order by
 * time and an incremental sort orders only the calls of one millisecond by id.
 */
function assertIndexOrderedByTime(detail: string, table: string) {
  const scan = new RegExp(`Index Scan (Backward )?using \\w+ on ${table} .*rows=(\\d+)`).exec(
    detail,
  );
  assert.ok(scan, detail);
  assert.doesNotMatch(detail, new RegExp(`Seq Scan on ${table}`), detail);
  const sorts = detail.split("\n").filter((line) => /Sort {2}\(/.test(line));
  for (const sort of sorts) {
    // PostgreSQL sorts a filter it expects a page or less of rows for whole.
    if (Number(scan[2]) <= 51) continue;
    assert.match(sort, /Incremental Sort/, detail);
    // Qualified when the statement has subqueries (the export's flags and domains).
    assert.match(detail, /Presorted Key: (tool_calls\.)?ts\b/, detail);
  }
}

Deno.test({
  name: "PostgreSQL list queries read an index in order, sorting at most one millisecond's calls",
  ignore,
  async fn(t) {
    await using database = await createTestDatabase({ icuLocale: "en-US" });
    const sql = connectPostgres(database.url, { max: 1 });
    try {
      await migratePostgres(sql);
      await sql.unsafe(
        await Deno.readTextFile(new URL("./fixtures/pg_plan_volume.sql", import.meta.url)),
      );
      const base = 1_790_000_000_000;
      const window = { after: base + 100 * 180_000, before: base + 2000 * 180_000 };
      const cursor: PageKey = [window.before, "tc_x"];
      await t.step("sessions, unfiltered, first page and cursor page", async () => {
        for (const after of [null, cursor]) {
          const detail = await plan(sql, postgresQueries.sessionsPage("org_A", {}, after, 50));
          assertIndexOrdered(detail, "sessions", "sessions_by_last_seen");
        }
      });
      const facts = { actors: ["act_1", "act_2"], busiest: "s000101", window };
      for (const [name, filter] of callFilterTable(facts)) {
        await t.step(`tool calls, ${name}, first page and cursor page`, async () => {
          for (const after of [null, cursor]) {
            const statement = postgresQueries.toolCallsPage("org_A", filter, after, 50);
            const detail = await plan(sql, statement);
            assertIndexOrderedByTime(detail, "tool_calls");
            // A cursor page starts at the cursor's time, not at the newest call.
            if (after !== null) assert.match(detail, /Index Cond: .*ts/, detail);
          }
        });
      }
      for (const [name, filter] of callFilterTable(facts)) {
        await t.step(
          `the export of tool calls, ${name}, first page and a resumed page`,
          async () => {
            for (const after of [null, cursor]) {
              // Pages of 50 as the lists' (EXPORT_PAGE_ROWS is 1,000): the fixture holds less
              // than a page of that size for most filters, which PostgreSQL rightly sorts whole.
              const statement = postgresQueries.exportToolCallsPage("org_A", filter, after, 50);
              const detail = await plan(sql, statement);
              assertIndexOrderedByTime(detail, "tool_calls");
              if (after !== null) assert.match(detail, /Index Cond: .*ts/, detail);
              // Flags and domains along their primary keys, the call's id first.
              assert.match(detail, /using risk_flags_pkey on risk_flags/, detail);
              assert.match(detail, /using domain_hits_pkey on domain_hits/, detail);
            }
          },
        );
      }
      await t.step(
        "the export of sessions walks sessions_by_last_seen from its place",
        async () => {
          for (const filter of [{}, window]) {
            for (const after of [null, cursor]) {
              const statement = postgresQueries.exportSessionsPage("org_A", filter, after, 50);
              const detail = await plan(sql, statement);
              assertIndexOrdered(detail, "sessions", "sessions_by_last_seen");
              if (after !== null) assert.match(detail, /Index Cond: .*last_seen/, detail);
            }
          }
          // With an actor, a team, an agent or a domain PostgreSQL may start from the few
          // sessions of the filter (the fixture's rollup is empty) or walk the index.
          const filters: SessionFilters[] = [
            { actor: "act_1", agent: "claude-code" },
            { team: ["act_1", "act_2"] },
            { domain: "pypi.org" },
          ];
          for (const filter of filters) {
            for (const after of [null, cursor]) {
              const statement = postgresQueries.exportSessionsPage("org_A", filter, after, 50);
              const detail = await plan(sql, statement);
              assert.doesNotMatch(detail, /Seq Scan on sessions/, detail);
            }
          }
        },
      );
      await t.step("filtered sessions read calls through the filter's index", async () => {
        for (
          const [filter, index] of [
            // Without a time filter an actor's or a domain's sessions come from the
            // session_actors rollup (tests/session_rollup_plan_test.ts); with one, from calls.
            [{ actor: "act_1", after: 0 }, "tool_calls_by_actor"],
            [{ outcome: "rejected" }, "tool_calls_by_outcome"],
            [{ sessionId: "s000101" }, "tool_calls_by_session"],
            [{ domain: "pypi.org", after: 0 }, "tool_calls_by_session"],
          ] as const
        ) {
          const detail = await plan(sql, postgresQueries.sessionsPage("org_A", filter, null, 50));
          assert.match(detail, new RegExp(`using ${index} on tool_calls|on ${index}`), detail);
          assert.doesNotMatch(detail, /Seq Scan on tool_calls/, detail);
        }
      });
      await t.step("facets seek one value at a time", async () => {
        for (const name of FACETS) {
          const detail = await plan(sql, postgresQueries.facet("org_A", name));
          assert.match(detail, /Index Only Scan/, detail);
          assert.doesNotMatch(detail, /Seq Scan/, detail);
        }
      });
      await t.step("details read one session's index range or one key", async () => {
        const statements = [
          ...postgresQueries.sessionDetail("org_A", "s000101"),
          postgresQueries.toolCallDetail("org_A", "tc_x"),
        ];
        for (const statement of statements) {
          const detail = await plan(sql, statement);
          assert.match(detail, /Index (Only )?Scan/, detail);
          assert.doesNotMatch(detail, /Seq Scan/, detail);
        }
        const modelCalls = await plan(sql, {
          sql: postgresQueries.sql("session_model_calls"),
          params: ["org_A", "s000101"],
        });
        assert.match(modelCalls, /Index Scan using model_calls_by_session on model_calls/);
        assert.doesNotMatch(modelCalls, /model_calls_by_time/, modelCalls);
      });
    } finally {
      await sql.end();
    }
  },
});

Deno.test({
  name: "PgReader runs a batch in one read-only snapshot under the time limit",
  ignore,
  async fn() {
    await using database = await createTestDatabase();
    const sql = connectPostgres(database.url, { max: 1 });
    const other = connectPostgres(database.url, { max: 1 });
    try {
      await sql.unsafe("CREATE TABLE marks (n integer)");
      const reader = new PgReader(sql, { timeoutMs: 1500, maxConcurrent: 1 });
      const setting = (name: string) => ({
        sql: "SELECT current_setting(?) AS value",
        params: [name],
      });
      const count = { sql: "SELECT count(*) AS n FROM marks", params: [] };
      const sleep = "SELECT pg_sleep(0.3)";
      const reading = reader.read([
        setting("transaction_isolation"),
        setting("transaction_read_only"),
        setting("statement_timeout"),
        count,
        { sql: sleep, params: [] },
        count,
      ]);
      // A row committed after the batch's first count, while it sleeps.
      while ((await other`SELECT 1 FROM pg_stat_activity WHERE query = ${sleep}`).length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await other`INSERT INTO marks VALUES (1)`;
      const results = await reading;
      assert.deepStrictEqual(results.slice(0, 3), [
        [{ value: "repeatable read" }],
        [{ value: "on" }],
        [{ value: "1500ms" }],
      ]);
      assert.deepStrictEqual([results[3], results[5]], [[{ n: 0 }], [{ n: 0 }]]);
      const [shown] = await sql.unsafe("SHOW statement_timeout");
      assert.deepStrictEqual({ ...shown }, { statement_timeout: "0" }, "the limit is the batch's");
      await assert.rejects(
        reader.read([{ sql: "INSERT INTO marks VALUES (2)", params: [] }]),
        (error: { code?: string }) => error.code === "25006",
      );
      reader.close();
    } finally {
      await Promise.all([sql.end(), other.end()]);
    }
  },
});

Deno.test({
  name: "PgReader prepares the statements it reads, up to a bound of distinct texts",
  ignore,
  async fn() {
    await using database = await createTestDatabase();
    const sql = connectPostgres(database.url, { max: 1 });
    try {
      const reader = new PgReader(sql, { timeoutMs: 5000, maxConcurrent: 1 });
      const prepared = async () => {
        const [rows] = await reader.read([{
          sql: "SELECT statement FROM pg_prepared_statements",
          params: [],
        }]);
        return (rows as { statement: string }[]).map((row) => row.statement);
      };
      const [rows] = await reader.read([{ sql: "SELECT ? + 1 AS n", params: [41] }]);
      assert.deepStrictEqual(rows, [{ n: 42 }]);
      assert.ok((await prepared()).includes("SELECT $1 + 1 AS n"), "a read is prepared");
      // Distinct texts past the bound run unprepared: the connection's statements stop growing.
      for (let i = 0; i < 300; i++) {
        const [rows] = await reader.read([{ sql: `SELECT ? + ${i} AS n`, params: [0] }]);
        assert.deepStrictEqual(rows, [{ n: i }]);
      }
      const statements = (await prepared()).filter((text) => text.startsWith("SELECT $1 + "));
      assert.ok(statements.length <= 256, `${statements.length} prepared`);
      assert.ok(
        statements.includes("SELECT $1 + 200 AS n"),
        "texts before the bound stay prepared",
      );
      assert.ok(!statements.includes("SELECT $1 + 299 AS n"), "texts past it are not prepared");
      reader.close();
    } finally {
      await sql.end();
    }
  },
});

Deno.test({
  name: "PgReader fails a statement past the time limit with QueryTimeoutError and recovers",
  ignore,
  async fn() {
    await using database = await createTestDatabase();
    const sql = connectPostgres(database.url, { max: 1 });
    try {
      const reader = new PgReader(sql, { timeoutMs: 50, maxConcurrent: 1 });
      await assert.rejects(
        reader.read([{ sql: "SELECT pg_sleep(1)", params: [] }]),
        QueryTimeoutError,
      );
      assert.deepStrictEqual(await reader.read([{ sql: "SELECT 1 AS n", params: [] }]), [[{
        n: 1,
      }]]);
      await assert.rejects(
        reader.read([{ sql: "SELECT * FROM no_such_table", params: [] }]),
        (error: Error & { code?: string }) =>
          !(error instanceof QueryTimeoutError) && error.code === "42P01",
      );
      reader.close();
    } finally {
      await sql.end();
    }
  },
});

Deno.test({
  name: "PgReader runs at most maxConcurrent reads, queues maxQueued more and refuses the rest",
  ignore,
  async fn() {
    await using database = await createTestDatabase();
    const sql = connectPostgres(database.url, { max: 4 });
    try {
      const reader = new PgReader(sql, { timeoutMs: 5000, maxConcurrent: 2, maxQueued: 1 });
      const clock = {
        sql: "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS ms",
        params: [],
      };
      const timed = () =>
        reader.read([clock, { sql: "SELECT pg_sleep(0.2)", params: [] }, clock]).then((
          results,
        ) => ({
          start: (results[0]![0] as { ms: number }).ms,
          end: (results[2]![0] as { ms: number }).ms,
        }));
      const reads = [timed(), timed(), timed()];
      await assert.rejects(reader.read([clock]), QueryQueueFullError);
      const [first, second, third] = await Promise.all(reads);
      assert.ok(second!.start < first!.end && first!.start < second!.end, "two ran at once");
      assert.ok(third!.start >= Math.min(first!.end, second!.end), "the third waited its turn");
      await reader.read([clock]);

      const queued = [timed(), timed(), reader.read([clock])];
      reader.close();
      const settled = await Promise.allSettled(queued);
      assert.deepStrictEqual(settled.map((s) => s.status), ["fulfilled", "fulfilled", "rejected"]);
      assert.ok((settled[2] as PromiseRejectedResult).reason instanceof QueryFailedError);
      await assert.rejects(reader.read([clock]), QueryFailedError);
    } finally {
      await sql.end();
    }
  },
});
