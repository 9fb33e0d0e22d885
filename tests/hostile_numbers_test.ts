/**
 * Issue #14 findings 1 and 3 through the real server, on both engines:
 * hostile times and numbers are rejected record by record in
 * `partialSuccess` while the rest of the export is stored; rows an older
 * version stored are repaired by the migration; a bad row can never fail
 * another organization's insights; and neither a huge identifier nor huge
 * texts can grow the database or a list page far beyond the bytes received.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { ERROR_MESSAGE_MAX_BYTES, TEXT_MAX_BYTES } from "../src/ingest/limits.ts";
import { connectPostgres } from "../src/store/postgres/client.ts";
import {
  engineTest,
  startTestServer,
  testEngine,
  type TestOrg,
  type TestServer,
} from "./_harness.ts";
import { apiRequest, claudeEvent, claudeExport, toolResult } from "./_otlp.ts";
import { createTestDatabase, type TestDatabase } from "./_pg.ts";

const INSIGHTS = ["activity", "top-tools", "outliers", "cost", "risk", "domains"];
const HOUR = 3_600_000;
const NOW = Date.now();

/** Posts an OTLP/JSON export and returns status and parsed body. */
async function send(server: TestServer, path: string, body: unknown, key: string) {
  const response = await server.ingest(path, body, key);
  const text = await response.text();
  return { status: response.status, body: text === "" ? null : JSON.parse(text) };
}

/** A GenAI `execute_tool` span; times are nanosecond texts. */
function toolSpan(spanId: string, start: string, end: string) {
  return {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId,
    name: "execute_tool Bash",
    startTimeUnixNano: start,
    endTimeUnixNano: end,
    attributes: [
      { key: "gen_ai.operation.name", value: { stringValue: "execute_tool" } },
      { key: "gen_ai.conversation.id", value: { stringValue: "span-session" } },
      { key: "gen_ai.tool.name", value: { stringValue: "Bash" } },
      { key: "gen_ai.tool.call.id", value: { stringValue: `call-${spanId}` } },
    ],
  };
}

function spanExport(spans: unknown[]) {
  return {
    resourceSpans: [{
      resource: { attributes: [{ key: "service.name", value: { stringValue: "my-agent" } }] },
      scopeSpans: [{ spans }],
    }],
  };
}

const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

/** A Claude Code tool_result with its times replaced. */
function withTimes(record: Record<string, unknown>, times: Record<string, unknown>) {
  const attributes = (record.attributes as { key: string }[])
    .filter((a) => a.key !== "event.timestamp");
  return { ...record, ...times, attributes };
}

/**
 * Every list, facet, detail and insight of `org` answers 200 (details of its
 * first session and call, when it has one); returns the tool-call list.
 */
async function everyReadAnswers(server: TestServer, org: TestOrg, label: string) {
  const paths = ["/v1/sessions", "/v1/sessions/facets", "/v1/tool-calls", "/v1/tool-calls/facets"];
  for (const insight of INSIGHTS) {
    for (const window of ["7d", "30d", "90d"]) {
      paths.push(`/v1/insights/${insight}?window=${window}`);
    }
  }
  const answers = new Map<string, unknown>();
  for (const path of paths) {
    const { status, body } = await server.getJson(path, org.apiKey);
    assert.equal(status, 200, `${label}: GET ${path} → ${status} ${JSON.stringify(body)}`);
    answers.set(path, body);
  }
  // deno-lint-ignore no-explicit-any
  const sessions = answers.get("/v1/sessions") as any;
  // deno-lint-ignore no-explicit-any
  const calls = answers.get("/v1/tool-calls") as any;
  for (const session of sessions.data) {
    const path = `/v1/sessions/${encodeURIComponent(session.session_id)}`;
    assert.equal((await server.getJson(path, org.apiKey)).status, 200, `${label}: ${path}`);
  }
  for (const call of calls.data) {
    const path = `/v1/tool-calls/${call.id}`;
    assert.equal((await server.getJson(path, org.apiKey)).status, 200, `${label}: ${path}`);
  }
  return calls.data as { id: string; session_id: string; duration_ms: number | null }[];
}

// Catches: any one range check removed (the record is stored, and on SQLite
// the replica copy fails for every organization: insights 500), and a
// rejection that drops the whole export instead of one record.
engineTest(
  "hostile times and numbers are rejected in partialSuccess; the rest is stored and every read answers for both organizations",
  async () => {
    await using server = await startTestServer();
    const a = await server.createOrg("Alpha");
    const b = await server.createOrg("Bravo");
    const t = NOW - HOUR;
    assert.equal(
      (await send(
        server,
        "/v1/logs",
        claudeExport([
          toolResult({ session: "b1", id: "b-call", tool: "Read", timeMs: t - 5000 }),
        ]),
        b.ingestKey,
      )).status,
      200,
    );

    const good = toolResult({ session: "a1", id: "good", tool: "Bash", timeMs: t });
    const bad = (id: string) => toolResult({ session: "a1", id, tool: "Bash", timeMs: t });
    const logs = await send(
      server,
      "/v1/logs",
      claudeExport([
        good,
        withTimes(bad("forty-zeros"), { timeUnixNano: "1" + "0".repeat(40) }),
        withTimes(bad("1e300"), { timeUnixNano: 1e300, observedTimeUnixNano: 1e300 }),
        claudeEvent("tool_result", t, {
          "session.id": "a1",
          "tool_name": "Bash",
          "tool_use_id": "long-run",
          "duration_ms": "9223372036854775808",
        }),
        claudeEvent("api_request", t, {
          "session.id": "a1",
          "model": "m",
          "request_id": "huge-tokens",
          "input_tokens": "9223372036854775808",
        }),
        apiRequest({ session: "a1", timeMs: t, model: "m", costUsd: 0.5, requestId: "ok" }),
      ]),
      a.ingestKey,
    );
    assert.equal(logs.status, 200);
    assert.equal(logs.body.partialSuccess.rejectedLogRecords, 4);
    assert.match(logs.body.partialSuccess.errorMessage, /^4 unusable record\(s\): .*out of range/);

    const spans = await send(
      server,
      "/v1/traces",
      spanExport([
        toolSpan("00000000000000a1", ns(t), ns(t + 25)),
        toolSpan("00000000000000a2", "1" + "0".repeat(40), ns(t)),
        toolSpan("00000000000000a3", ns(t), "1" + "0".repeat(40)),
      ]),
      a.ingestKey,
    );
    assert.equal(spans.status, 200);
    assert.equal(spans.body.partialSuccess.rejectedSpans, 2);
    assert.match(spans.body.partialSuccess.errorMessage, /(start|end)TimeUnixNano out of range/);

    const callsA = await everyReadAnswers(server, a, "Alpha");
    assert.deepEqual(callsA.map((c) => c.session_id).sort(), ["a1", "span-session"]);
    assert.equal(callsA.find((c) => c.session_id === "span-session")!.duration_ms, 25);
    const cost = await server.getJson("/v1/insights/cost", a.apiKey);
    assert.equal(JSON.stringify(cost.body).includes("9223372036854775808"), false);
    const callsB = await everyReadAnswers(server, b, "Bravo");
    assert.equal(callsB.length, 1);
  },
);

/** The telemetry store of a test server, to plant rows as an older version stored them. */
interface Planter {
  /** Plants a tool call, and its session, with the given raw values. */
  toolCall(
    org: TestOrg,
    id: string,
    session: string,
    ts: number,
    durationMs: number | bigint,
  ): Promise<void>;
  /** Plants a model call with the given raw values. */
  modelCall(
    org: TestOrg,
    id: string,
    session: string,
    ts: number,
    tokens: number | bigint,
  ): Promise<void>;
  /** Marks the range repair as not yet applied, as on a store from before it. */
  unmigrate(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Schemas 15 to 19 undone: the calls back in a tool_calls table (ids, not
 * keys), with the indexes the migrations after schema 3 drop by name, flags
 * and domain hits naming it again, and decisions by ids.
 */
const UNKEY_CALLS = `
  PRAGMA foreign_keys = OFF;
  CREATE TABLE tool_calls_table AS SELECT * FROM tool_calls;
  CREATE TABLE model_calls_table AS SELECT * FROM model_calls;
  CREATE TABLE hits AS SELECT * FROM domain_hits;
  DROP VIEW domain_hits;
  DROP VIEW tool_calls; DROP VIEW model_calls;
  DROP TABLE calls; DROP TABLE keyed_model_calls;
  CREATE TABLE decisions_table AS SELECT * FROM decisions;
  DROP VIEW decisions; DROP TABLE keyed_decisions; DROP TABLE prompt_keys;
  CREATE TABLE decisions (org_id TEXT NOT NULL, session_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL, decision TEXT NOT NULL, decision_source TEXT,
    PRIMARY KEY (org_id, session_id, tool_call_id)) WITHOUT ROWID;
  INSERT INTO decisions SELECT * FROM decisions_table;
  DROP TABLE decisions_table;
  DROP TABLE org_keys; DROP TABLE session_keys; DROP TABLE actor_keys;
  ALTER TABLE tool_calls_table RENAME TO tool_calls;
  ALTER TABLE model_calls_table RENAME TO model_calls;
  CREATE UNIQUE INDEX model_calls_id ON model_calls (id);
  CREATE INDEX model_calls_by_session ON model_calls (org_id, session_id);
  CREATE INDEX model_calls_by_time ON model_calls (org_id, ts);
  CREATE INDEX model_calls_by_seq ON model_calls (seq);
  CREATE UNIQUE INDEX tool_calls_id ON tool_calls (id);
  CREATE INDEX tool_calls_by_seq ON tool_calls (seq);
  ${
  ["time", "session", "tool_name", "tool_type", "category", "outcome", "actor"].map((key) =>
    `CREATE INDEX tool_calls_by_${key} ON tool_calls (org_id, ${
      key === "time" ? "" : `${key === "session" || key === "actor" ? `${key}_id` : key}, `
    }ts);`
  ).join("\n")
}
  CREATE TABLE flags AS SELECT * FROM risk_flags;
  DROP TABLE risk_flags;
  CREATE TABLE risk_flags (call_id TEXT NOT NULL REFERENCES tool_calls (id) ON DELETE CASCADE,
    flag TEXT NOT NULL, org_id TEXT NOT NULL, seq INTEGER NOT NULL, session_id TEXT NOT NULL,
    ts INTEGER NOT NULL, tool_call_id TEXT NOT NULL, tool_name TEXT NOT NULL,
    evidence TEXT NOT NULL, PRIMARY KEY (call_id, flag)) WITHOUT ROWID;
  INSERT INTO risk_flags SELECT * FROM flags;
  DROP TABLE flags;
  DROP TABLE keyed_domain_hits;
  CREATE TABLE domain_hits (call_id TEXT NOT NULL REFERENCES tool_calls (id) ON DELETE CASCADE,
    domain TEXT NOT NULL, scheme TEXT NOT NULL, org_id TEXT NOT NULL, seq INTEGER NOT NULL,
    session_id TEXT NOT NULL, ts INTEGER NOT NULL, PRIMARY KEY (call_id, domain, scheme))
    WITHOUT ROWID;
  INSERT INTO domain_hits SELECT * FROM hits;
  DROP TABLE hits;
  PRAGMA foreign_keys = ON;`;

const ORG_KEY = "(SELECT org_key FROM org_keys WHERE org_id = ?1)";
const SESSION_KEY =
  `(SELECT session_key FROM session_keys WHERE session_id = ?2 AND org_key = ${ORG_KEY})`;
const ACTOR_KEY = `(SELECT actor_key FROM actor_keys WHERE actor_id = ?5 AND org_key = ${ORG_KEY})`;

function sqlitePlanter(dir: string): Planter {
  const db = new DatabaseSync(`${dir}/telemetry.db`);
  const nextSeq = () => {
    db.prepare("UPDATE counters SET value = value + 1 WHERE name = 'seq'").run();
    return Number((db.prepare("SELECT value FROM counters WHERE name = 'seq'").get())!.value);
  };
  // Schema 15's keyed calls: the ids' keys first (?1 the organization, ?2 the session, ?5 the
  // actor in the inserts).
  const addKeys = (org: { orgId: string; actorId: string }, session: string) => {
    db.prepare("INSERT OR IGNORE INTO org_keys (org_id) VALUES (?)").run(org.orgId);
    db.prepare(`INSERT OR IGNORE INTO session_keys (session_id, org_key) VALUES (?2, ${ORG_KEY})`)
      .run(org.orgId, session);
    db.prepare(`INSERT OR IGNORE INTO actor_keys (actor_id, org_key) VALUES (?2, ${ORG_KEY})`)
      .run(org.orgId, org.actorId);
  };
  return {
    toolCall(org, id, session, ts, durationMs) {
      const seq = nextSeq();
      addKeys(org, session);
      db.prepare(
        `INSERT INTO calls (id, org_key, seq, session_key, actor_key, ts, tool_name, tool_type,
          category, outcome, duration_ms, agent_system, source)
        VALUES (?3, ${ORG_KEY}, ?4, ${SESSION_KEY}, ${ACTOR_KEY}, ?6, 'Bash', 'builtin',
          'code_exec', 'ok', ?7, 'claude-code', 'otlp_logs')`,
      ).run(org.orgId, session, id, seq, org.actorId, ts, durationMs);
      db.prepare(
        `INSERT INTO sessions (org_id, session_id, seq, actor_id, first_seen, last_seen,
          tool_call_count, success_count, agent_system)
        VALUES (?, ?, ?, ?, ?, ?, 1, 1, 'claude-code')
        ON CONFLICT (org_id, session_id) DO UPDATE SET last_seen = excluded.last_seen,
          tool_call_count = tool_call_count + 1, success_count = success_count + 1`,
      ).run(org.orgId, session, seq, org.actorId, ts, ts);
      return Promise.resolve();
    },
    modelCall(org, id, session, ts, tokens) {
      addKeys(org, session);
      db.prepare(
        `INSERT INTO keyed_model_calls (id, org_key, seq, session_key, actor_key, ts, agent_system,
          model, input_tokens, cost_usd)
        VALUES (?3, ${ORG_KEY}, ?4, ${SESSION_KEY}, ${ACTOR_KEY}, ?6, 'claude-code', 'm', ?7, 1.5)`,
      ).run(org.orgId, session, id, nextSeq(), org.actorId, ts, tokens);
      return Promise.resolve();
    },
    unmigrate() {
      // Back to before the repair migration (4), and so before every later one.
      db.exec(UNKEY_CALLS);
      db.exec(
        `DROP TABLE IF EXISTS metric_points; DROP TABLE IF EXISTS session_actors;
        DROP TABLE IF EXISTS unmapped_events; DROP INDEX IF EXISTS sessions_by_parent;
        DROP TABLE IF EXISTS session_dimensions; DROP TABLE IF EXISTS dimension_values;
        DROP TABLE IF EXISTS dimension_drops;
        ALTER TABLE model_calls DROP COLUMN estimated_cost_usd;
        ALTER TABLE sessions DROP COLUMN reported_cost_calls;
        ALTER TABLE sessions DROP COLUMN estimated_cost_calls;
        ALTER TABLE sessions DROP COLUMN estimated_cost_usd;
        ALTER TABLE sessions DROP COLUMN parent_session_id; PRAGMA user_version = 3`,
      );
      return Promise.resolve();
    },
    close() {
      db.close();
      return Promise.resolve();
    },
  };
}

function postgresPlanter(url: string): Planter {
  const sql = connectPostgres(url, { max: 1 });
  return {
    async toolCall(org, id, session, ts, durationMs) {
      await sql.unsafe(
        `INSERT INTO tool_calls (id, org_id, seq, session_id, actor_id, ts, tool_name, tool_type,
          category, outcome, duration_ms, agent_system, source)
        VALUES ($1, $2, nextval('telemetry_seq'), $3, $4, $5::bigint, 'Bash', 'builtin',
          'code_exec', 'ok', $6::bigint, 'claude-code', 'otlp_logs')`,
        [id, org.orgId, session, org.actorId, String(ts), String(durationMs)],
      );
      await sql.unsafe(
        `INSERT INTO sessions (org_id, session_id, seq, actor_id, first_seen, last_seen,
          tool_call_count, success_count, agent_system)
        VALUES ($1, $2, nextval('telemetry_seq'), $3, $4::bigint, $4::bigint, 1, 1, 'claude-code')
        ON CONFLICT (org_id, session_id) DO UPDATE SET last_seen = excluded.last_seen,
          tool_call_count = sessions.tool_call_count + 1,
          success_count = sessions.success_count + 1`,
        [org.orgId, session, org.actorId, String(ts)],
      );
    },
    async modelCall(org, id, session, ts, tokens) {
      await sql.unsafe(
        `INSERT INTO model_calls (id, org_id, seq, session_id, actor_id, ts, agent_system, model,
          input_tokens, cost_usd)
        VALUES ($1, $2, nextval('telemetry_seq'), $3, $4, $5::bigint, 'claude-code', 'm',
          $6::bigint, 1.5)`,
        [id, org.orgId, session, org.actorId, String(ts), String(tokens)],
      );
    },
    async unmigrate() {
      // Back to before the repair migration (3), and so before every later one.
      await sql.unsafe("DROP TABLE IF EXISTS metric_points");
      await sql.unsafe("DROP TABLE IF EXISTS session_actors");
      await sql.unsafe("ALTER TABLE sessions DROP COLUMN IF EXISTS parent_session_id");
      await sql.unsafe("DROP TABLE IF EXISTS unmapped_events");
      await sql.unsafe("ALTER TABLE model_calls DROP COLUMN IF EXISTS estimated_cost_usd");
      for (const column of ["reported_cost_calls", "estimated_cost_calls", "estimated_cost_usd"]) {
        await sql.unsafe(`ALTER TABLE sessions DROP COLUMN IF EXISTS ${column}`);
      }
      for (const table of ["session_dimensions", "dimension_values", "dimension_drops"]) {
        await sql.unsafe(`DROP TABLE IF EXISTS ${table}`);
      }
      await sql.unsafe("DELETE FROM schema_migrations WHERE version >= 3");
    },
    async close() {
      await sql.end();
    },
  };
}

/** Opens a planter on a stopped server's store: `dir`'s SQLite files, or `database`. */
function planter(dir: string, database: string | undefined): Planter {
  return database === undefined ? sqlitePlanter(dir) : postgresPlanter(database);
}

// Catches: the migration not registered or not deleting a bad row (lists of
// the bad organization answer 500: no Date of its time), and the replica
// guards removed (a bad row stored after the migration fails every
// organization's insights on SQLite, where the copy goes through a double).
engineTest(
  "rows an older version stored out of range are repaired at start and every read answers",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-test-" });
    const pg: TestDatabase | null = testEngine() === "postgres" ? await createTestDatabase() : null;
    const database = pg?.url;
    try {
      let a: TestOrg;
      let b: TestOrg;
      const t = NOW - HOUR;
      {
        await using server = await startTestServer({ dir, database });
        a = await server.createOrg("Alpha");
        b = await server.createOrg("Bravo");
        for (const [org, session] of [[a, "a1"], [b, "b1"]] as const) {
          const records = [
            toolResult({ session, id: `${session}-ok`, tool: "Bash", timeMs: t }),
            apiRequest({ session, timeMs: t, model: "m", costUsd: 0.25, requestId: session }),
          ];
          assert.equal(
            (await send(server, "/v1/logs", claudeExport(records), org.ingestKey)).status,
            200,
          );
        }
        await everyReadAnswers(server, a, "before");
      }
      // As an older version stored them: floats past INT64 in SQLite, past
      // 2^53 or a Date in PostgreSQL's BIGINT.
      const sqlite = database === undefined;
      const badTs = sqlite ? 1e34 : 9e15;
      // 2^63-1 is a BIGINT, but its double (the replica's copy) is 2^63.
      const huge = sqlite ? 2 ** 63 : 9223372036854775807n;
      {
        const store = planter(dir, database);
        await store.toolCall(a, "old-bad-time", "a1", badTs, 10);
        await store.toolCall(a, "old-bad-duration", "a2", t, huge);
        await store.modelCall(a, "old-bad-tokens", "a1", t, huge);
        await store.unmigrate();
        await store.close();
      }
      {
        await using server = await startTestServer({ dir, database });
        const calls = await everyReadAnswers(server, a, "Alpha after repair");
        assert.deepEqual(calls.map((c) => c.id).length, 1, "only the good call is left");
        const sessions = await server.getJson("/v1/sessions", a.apiKey);
        assert.deepEqual(sessions.body.data.map((s: { session_id: string }) => s.session_id), [
          "a1",
        ]);
        assert.equal(sessions.body.data[0].tool_call_count, 1);
        assert.equal(sessions.body.data[0].cost_usd, 0.25, "the bad model call's cost is gone");
        await everyReadAnswers(server, b, "Bravo after repair");
      }
      // A bad row appearing after the migration (a bug, a hand edit) fails at
      // most its own organization's lists, never anyone's insights.
      {
        const store = planter(dir, database);
        await store.toolCall(a, "new-bad-duration", "a3", t, huge);
        await store.modelCall(a, "new-bad-tokens", "a3", t, huge);
        await store.close();
      }
      {
        await using server = await startTestServer({ dir, database });
        for (const org of [a, b]) {
          for (const insight of INSIGHTS) {
            const { status, body } = await server.getJson(`/v1/insights/${insight}`, org.apiKey);
            assert.equal(status, 200, `${insight}: ${JSON.stringify(body)}`);
          }
        }
        await everyReadAnswers(server, b, "Bravo beside a bad row");
      }
    } finally {
      await pg?.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

/**
 * Bytes the telemetry store holds on disk (SQLite: file and WAL; PostgreSQL:
 * the database), each after a checkpoint: a page copied into SQLite's file
 * while its WAL frame is still there (the checkpoint thread's timing) would
 * otherwise count twice.
 */
async function storeBytes(server: TestServer): Promise<number> {
  if (server.database !== null) {
    const sql = connectPostgres(server.database, { max: 1 });
    try {
      await sql.unsafe("CHECKPOINT").catch(() => {});
      const [row] = await sql.unsafe<{ size: string }[]>(
        "SELECT pg_database_size(current_database())::text AS size",
      );
      return Number(row!.size);
    } finally {
      await sql.end();
    }
  }
  // The pages the store's tables and indexes use, WAL included: the files' sizes also counted
  // a WAL the running server's readers kept from being truncated (on a busy machine).
  const db = new DatabaseSync(`${server.dir}/telemetry.db`, { readOnly: true });
  try {
    const row = db.prepare(
      "SELECT (page_count - freelist_count) * page_size AS used FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()",
    ).get() as { used: number };
    return Number(row.used);
  } finally {
    db.close();
  }
}

// Catches: the session id cap removed or raised (the 1 MiB id is stored in
// every row and index: 251 MB for 1.1 MB received before), a text cap
// removed (the page of 60 calls holds 60 MiB of error messages), and the
// domains-per-call bound removed (2,000 domain hits per call: 50 times).
engineTest(
  "neither a 1 MiB session id nor huge texts grow the store or a list page beyond a small multiple of what was sent",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const t = NOW - HOUR;
    // Warm the store up so that fixed first-write costs are not counted.
    await send(
      server,
      "/v1/logs",
      claudeExport([
        toolResult({ session: "warm", id: "warm", tool: "Bash", timeMs: t }),
      ]),
      org.ingestKey,
    );

    const huge = claudeExport(
      Array.from({ length: 60 }, (_, i) =>
        claudeEvent("tool_result", t + i, {
          "tool_name": "Bash",
          "tool_use_id": `big-${i}`,
          "success": "true",
          "duration_ms": "3",
        })),
    );
    huge.resourceLogs[0]!.resource.attributes.push({
      key: "session.id",
      value: { stringValue: "s".repeat(1 << 20) },
    });
    const first = JSON.stringify(huge);
    const before = await storeBytes(server);
    const answer = await send(server, "/v1/logs", huge, org.ingestKey);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.partialSuccess.rejectedLogRecords, 60);
    assert.match(answer.body.partialSuccess.errorMessage, /session id too long: 1048576 bytes/);
    const afterIds = await storeBytes(server);
    assert.ok(
      afterIds - before <= first.length,
      `1 MiB session id: store grew ${afterIds - before} bytes for ${first.length} received`,
    );

    // 60 calls, each with a 100 KiB error and 100 KiB of arguments: about 12 MB sent.
    const texts = claudeExport(
      Array.from({ length: 60 }, (_, i) =>
        toolResult({
          session: "texts",
          id: `text-${i}`,
          tool: "Write",
          timeMs: t + 100 + i,
          success: false,
          error: `failure ${i} `.repeat(10_000),
          input: { "file_path": `/tmp/f${i}`, content: `line ${i}\n`.repeat(14_000) },
        })),
    );
    const second = JSON.stringify(texts);
    const answerTexts = await send(server, "/v1/logs", texts, org.ingestKey);
    assert.equal(answerTexts.status, 200);
    const afterTexts = await storeBytes(server);
    const perCall = ERROR_MESSAGE_MAX_BYTES + TEXT_MAX_BYTES + 16_384;
    assert.ok(
      afterTexts - afterIds <= 60 * perCall * 2,
      `huge texts: store grew ${afterTexts - afterIds} bytes for ${second.length} received`,
    );
    assert.ok(afterTexts - afterIds < second.length / 2, "caps keep less than was sent");

    const page = await server.get("/v1/tool-calls?limit=500", org.apiKey);
    assert.equal(page.status, 200);
    const body = await page.text();
    const listed = JSON.parse(body).data;
    assert.equal(listed.length, 61);
    assert.ok(
      body.length <= listed.length * (ERROR_MESSAGE_MAX_BYTES + 4096),
      `a page of ${listed.length} calls is ${body.length} bytes`,
    );
    assert.match(listed[0].error_message, /…\[truncated: \d+ bytes\]$/);

    // 20 calls of 2,000 `curl`s each (the 64 KiB of arguments kept): one
    // domain-hit row per domain repeats the session id in three indexes.
    const command = Array.from({ length: 4000 }, (_, i) => `curl https://h${i}.example.com`)
      .join("; ");
    const curls = claudeExport(
      Array.from({ length: 20 }, (_, i) =>
        toolResult({
          session: "d".repeat(256),
          id: `curl-${i}`,
          tool: "Bash",
          timeMs: t + 200 + i,
          input: { command },
        })),
    );
    const third = JSON.stringify(curls);
    assert.equal((await send(server, "/v1/logs", curls, org.ingestKey)).status, 200);
    const afterCurls = await storeBytes(server);
    assert.ok(
      afterCurls - afterTexts <= 2 * third.length,
      `domains: store grew ${afterCurls - afterTexts} bytes for ${third.length} received`,
    );

    const detail = await server.getJson(`/v1/tool-calls/${listed[0].id}`, org.apiKey);
    assert.equal(detail.status, 200);
    const args = JSON.parse(detail.body.arguments);
    assert.equal(typeof args, "object", "truncated arguments still parse to an object");
    assert.match(args.file_path, /^\/tmp\/f\d+$/);
    assert.match(args.content, /…\[truncated: 1\d+ bytes\]$/);
    // deno-lint-ignore no-console
    console.log(
      `received ${first.length} B → store +${afterIds - before} B; received ${second.length} B → ` +
        `store +${afterTexts - afterIds} B; received ${third.length} B of curls → store ` +
        `+${afterCurls - afterTexts} B; page of ${listed.length} calls: ${body.length} B`,
    );
  },
);
