/**
 * What a small catch-up does to the replica (issue #31: an insight right after
 * new data waits for it). A new call of a day the rollups hold is fresh (the
 * SQLite source tells it by its rowid) and adds its aggregate to the day; it
 * neither goes through the merge by key nor has its whole day recomputed from
 * raw rows, whose cost grows with the table. Seen in the rollups: an added
 * row and the day noted in `added_days`, where a recomputation leaves one row
 * per key and forgets the day. And the statements such a catch-up runs, as
 * DuckDB's query log records them: appends and the progress, nothing that
 * reads the replica's tables.
 */
import assert from "node:assert/strict";
import { Replica } from "../src/analytics/replica.ts";
import type { ModelCallEvent, ToolCallEvent } from "../src/model/telemetry.ts";
import { startInsightsEnv } from "./_insights_reference.ts";

const DAY = 86_400_000;
const HOUR = 3_600_000;

function midnight(ts: number): number {
  return ts - (((ts % DAY) + DAY) % DAY);
}

function modelCall(identity: string, timeMs: number): ModelCallEvent {
  return {
    kind: "model_call",
    sessionId: "s1",
    identity,
    timeMs,
    agentSystem: "claude-code",
    agentVersion: "2.1.0",
    providerName: "anthropic",
    model: "claude-sonnet-4-5",
    inputTokens: 1000,
    outputTokens: 100,
    cacheReadTokens: 10,
    cacheCreationTokens: 1,
    costUsd: 0.25,
    durationMs: 10,
  };
}

function toolCall(identity: string, timeMs: number): ToolCallEvent {
  return {
    kind: "tool_call",
    sessionId: "s1",
    identity,
    timeMs,
    agentSystem: "claude-code",
    agentVersion: "2.1.0",
    toolName: "Bash",
    toolType: "builtin",
    category: "code_exec",
    outcome: "ok",
    durationMs: 5,
    resultSizeBytes: 10,
    source: "otlp_logs",
    toolCallId: identity,
    arguments: JSON.stringify({ command: "ls" }),
  };
}

Deno.test("a new tool or model call of a rolled-up day adds its aggregate: its day is not recomputed", async () => {
  await using env = await startInsightsEnv();
  const org = await env.createOrg("Acme");
  const now = Date.now();
  const yesterday = midnight(now) - DAY + HOUR;
  const replica = await Replica.open({
    path: `${env.dir}/work-check.duckdb`,
    source: env.stores.replicaSource,
    quiet: true,
    now: () => now,
  });
  const count = async (sql: string) => {
    const [rows] = await replica.read([{ sql, params: {} }], Date.now() + 60_000);
    return Number(rows?.[0]?.n);
  };
  const rollupRows = async () => ({
    model: await count("SELECT count(*) AS n FROM model_days"),
    tool: await count("SELECT count(*) AS n FROM tool_days"),
    added: await count("SELECT count(*) AS n FROM (SELECT DISTINCT org_id, day FROM added_days)"),
  });
  try {
    await env.ingest(org, [modelCall("m1", yesterday), toolCall("t1", yesterday)]);
    await replica.catchUp();
    assert.ok(replica.daysThrough > yesterday, "yesterday is rolled up");
    assert.deepEqual(await rollupRows(), { model: 1, tool: 1, added: 0 });

    await env.ingest(org, [modelCall("m2", yesterday + 1), toolCall("t2", yesterday + 1)]);
    await replica.catchUp();
    assert.deepEqual(await rollupRows(), { model: 2, tool: 2, added: 1 });
    const totals = await replica.read([{
      sql: "SELECT sum(calls) AS calls, sum(input_tokens) AS input, sum(cost_usd) AS cost " +
        "FROM model_days",
      params: {},
    }], Date.now() + 60_000);
    assert.deepEqual(totals[0]?.[0], { calls: 2, input: 2000, cost: 0.5 });
  } finally {
    await replica.close();
  }
});

/** What a catch-up may run without reading a replica table: its transaction, appends, its progress. */
const APPEND_ONLY = [
  /^BEGIN TRANSACTION$/,
  /^INSERT INTO main\.\w+ FROM __duckdb_internal_appended_data$/,
  /^UPDATE meta SET value = /,
  /^COMMIT$/,
];

Deno.test("a catch-up of new calls, late and of today, runs appends only", async () => {
  await using env = await startInsightsEnv();
  const org = await env.createOrg("Acme");
  const now = Date.now();
  const yesterday = midnight(now) - DAY + HOUR;
  const replica = await Replica.open({
    path: `${env.dir}/log-check.duckdb`,
    source: env.stores.replicaSource,
    quiet: true,
    now: () => now,
  });
  const run = (sql: string) => replica.read([{ sql, params: {} }], Date.now() + 60_000);
  try {
    await env.ingest(org, [modelCall("m1", yesterday), toolCall("t1", yesterday)]);
    await replica.catchUp();
    await env.ingest(org, [
      modelCall("m2", yesterday + 1),
      toolCall("t2", yesterday + 1),
      modelCall("m3", now),
      toolCall("t3", now),
    ]);
    await run("CALL enable_logging('QueryLog')");
    await replica.catchUp();
    await run("CALL disable_logging()");
    const [logged] = await run(
      "SELECT message FROM duckdb_logs WHERE type = 'QueryLog' ORDER BY timestamp",
    );
    const statements = logged!.map((row) => String(row.message).trim())
      .filter((sql) => !/logging\(|duckdb_logs/.test(sql));
    assert.ok(statements.length > 0, "the catch-up's statements were logged");
    const reading = statements.filter((sql) => !APPEND_ONLY.some((pattern) => pattern.test(sql)));
    assert.deepEqual(reading, []);
  } finally {
    await replica.close();
  }
});
