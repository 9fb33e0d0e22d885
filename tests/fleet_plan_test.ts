/**
 * The fleet's statement (`GET /v1/fleet`, issue #33) reads by index from the
 * small tables only: the organization's actors one seek each down
 * session_actors_by_actor and unmapped_events' key, each actor's sessions in
 * its range of session_actors_by_actor, each session's row by its key; never
 * tool_calls, model_calls or metric_points, never a scan of a table. SQLite:
 * EXPLAIN QUERY PLAN on an empty store (no statistics: the plan must not
 * depend on them). PostgreSQL: EXPLAIN over 24,000 rollup rows in 4 organizations after ANALYZE.
 * Both: of more actors than the bound, the newest are the ones answered.
 */
import assert from "node:assert/strict";
import { connectPostgres, numberPlaceholders, type Sql } from "../src/store/postgres/client.ts";
import { migratePostgres } from "../src/store/postgres/migrate.ts";
import { postgresQueries } from "../src/store/postgres/reader.ts";
import { openDataDir } from "../src/store/sqlite/data_dir.ts";
import { openDatabase } from "../src/store/sqlite/database.ts";
import { sqliteQueries } from "../src/store/sqlite/reader.ts";
import type { FleetOptions, TelemetryQueries } from "../src/store/telemetry_queries.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";

const OPTIONS: FleetOptions = { silentSince: null, sessionsSince: 1_700_000_000_000, limit: 1000 };

/** Three actors' sessions and one's unmapped row, in org_1; another organization's newer actor. */
const ROWS = `
  INSERT INTO session_actors (org_id, session_id, actor_id, agent_system, first_seen, last_seen,
    calls, errors, oks, model_key)
  VALUES ('org_1', 's_1', 'act_a', 'claude-code', 10, 10, 1, 0, 1, NULL),
    ('org_1', 's_2', 'act_b', 'claude-code', 30, 30, 1, 0, 1, NULL),
    ('org_1', 's_3', 'act_c', 'claude-code', 20, 20, 1, 0, 1, NULL),
    ('org_2', 's_1', 'act_z', 'claude-code', 99, 99, 1, 0, 1, NULL);
  INSERT INTO sessions (org_id, session_id, seq, actor_id, first_seen, last_seen, agent_system,
    agent_version)
  VALUES ('org_1', 's_1', 1, 'act_a', 10, 10, 'claude-code', '1.0.0'),
    ('org_1', 's_2', 2, 'act_b', 30, 30, 'claude-code', '1.0.0'),
    ('org_1', 's_3', 3, 'act_c', 20, 20, 'claude-code', '1.0.0'),
    ('org_2', 's_1', 4, 'act_z', 99, 99, 'claude-code', '9.9.9');
  INSERT INTO unmapped_events (org_id, actor_id, agent, agent_version, event_name, reason,
    records, first_seen, last_seen)
  VALUES ('org_1', 'act_a', 'claude-code', '1.0.0', 'hook_execution_start', 'unmapped_event', 3,
    25, 25);`;

/** `kind actor_id last_seen` of the fleet's rows of actors, sorted. */
function actorRows(rows: Record<string, unknown>[]): string[] {
  return rows.filter((row) => row.kind === "actor" || row.kind === "sender")
    .map((row) => `${row.kind} ${row.actor_id} ${Number(row.last_seen)}`).sort();
}

/** The answer over {@link ROWS} with a bound of two actors: the two last seen. */
const BOUNDED = ["actor act_a 25", "actor act_b 30", "sender act_c 20"];

function boundedStatement(queries: TelemetryQueries) {
  return queries.fleet("org_1", { ...OPTIONS, limit: 2 });
}

Deno.test("SQLite: the fleet reads its actors, sessions and unmapped rows by index only", async (t) => {
  const dir = await Deno.makeTempDir();
  const data = await openDataDir(dir, { redactSecrets: true });
  const db = openDatabase(`${dir}/telemetry.db`);
  try {
    await t.step("the plan", () => {
      const { sql, params } = sqliteQueries.fleet("org_1", OPTIONS);
      const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
      const detail = rows.map((row) => row.detail).join("\n");
      const reads = detail.split("\n").filter((line) =>
        /\b(session_actors|sessions|unmapped_events|r|s|u)\b USING/.test(line)
      );
      for (const line of reads) {
        assert.match(
          line,
          /^SEARCH (session_actors|r) USING COVERING INDEX session_actors_by_actor \(org_id=\?|^SEARCH (unmapped_events|u) USING PRIMARY KEY \(org_id=\?|^SEARCH s USING PRIMARY KEY \(org_id=\? AND session_id=\?\)$/,
          detail,
        );
      }
      // Each table's skip scan and head of range, the recent sessions, the agents' rows and
      // their sessions' keys, the unmapped rows.
      assert.equal(reads.length, 10, detail);
      assert.match(detail, /session_actors_by_actor \(org_id=\? AND actor_id>\?\)/, detail);
      assert.match(detail, /unmapped_events USING PRIMARY KEY \(org_id=\? AND actor_id>\?\)/);
      assert.doesNotMatch(
        detail,
        /tool_calls|model_calls|metric_points|SCAN (session_actors|sessions|unmapped_events|r|s)\b/,
        detail,
      );
    });
    await t.step("of more actors than the bound, the last seen", () => {
      db.exec(ROWS);
      const { sql, params } = boundedStatement(sqliteQueries);
      assert.deepEqual(actorRows(db.prepare(sql).all(...params)), BOUNDED);
    });
  } finally {
    db.close();
    await data.close();
    await Deno.remove(dir, { recursive: true });
  }
});

async function explain(sql: Sql, text: string, params: unknown[]): Promise<string> {
  const rows = await sql.unsafe<{ "QUERY PLAN": string }[]>(
    `EXPLAIN ${numberPlaceholders(text)}`,
    params as string[],
  );
  return rows.map((row) => row["QUERY PLAN"]).join("\n");
}

Deno.test({
  name: "PostgreSQL: the fleet reads its actors, sessions and unmapped rows by index only",
  ignore: !pgTestUrl(),
  async fn(t) {
    await using database = await createTestDatabase();
    const sql = connectPostgres(database.url, { max: 1 });
    try {
      await migratePostgres(sql);
      await t.step("of more actors than the bound, the last seen", async () => {
        await sql.unsafe(ROWS);
        const { sql: text, params } = boundedStatement(postgresQueries);
        const rows = await sql.unsafe(numberPlaceholders(text), params as string[]);
        assert.deepEqual(actorRows(rows as Record<string, unknown>[]), BOUNDED);
      });
      await t.step("the plan over 24,000 rollup rows in 4 organizations", async () => {
        // Per organization of 4: 10 actors × 200 sessions × 3 agents, the sessions' rows,
        // unmapped rows.
        await sql.unsafe(`
          INSERT INTO session_actors (org_id, session_id, actor_id, agent_system, first_seen,
            last_seen, calls, errors, oks, model_key)
          SELECT 'org_' || o, 'x_' || a || '_' || s, 'act_' || o || '_' || a, g,
            1700000000000 + s * 1000, 1700000000000 + s * 1000 + a, 3, 1, 2, NULL
          FROM generate_series(1, 4) AS o, generate_series(1, 10) AS a,
            generate_series(1, 200) AS s,
            unnest(ARRAY['claude-code', 'codex_exec', 'gemini-cli']) AS g`);
        await sql.unsafe(`
          INSERT INTO sessions (org_id, session_id, seq, actor_id, first_seen, last_seen,
            agent_system, agent_version)
          SELECT org_id, session_id, 1, min(actor_id), min(first_seen), max(last_seen),
            min(agent_system), '1.0.' || (max(last_seen) % 7)
          FROM session_actors WHERE session_id LIKE 'x_%' GROUP BY org_id, session_id`);
        await sql.unsafe(`
          INSERT INTO unmapped_events (org_id, actor_id, agent, agent_version, event_name, reason,
            records, first_seen, last_seen)
          SELECT 'org_' || o, 'act_' || o || '_' || a, 'claude-code', '1.0.0', 'event_' || e,
            'unmapped_event', 1, 1700000000000, 1700000000000 + e
          FROM generate_series(1, 4) AS o, generate_series(1, 10) AS a,
            generate_series(1, 20) AS e`);
        await sql.unsafe("ANALYZE");
        const { sql: text, params } = postgresQueries.fleet("org_1", OPTIONS);
        const detail = await explain(sql, text, params);
        assert.match(detail, /Index Only Scan using session_actors_by_actor on session_actors/);
        assert.match(detail, /Index Scan using sessions_pkey on sessions s/, detail);
        assert.match(detail, /using unmapped_events_pkey on unmapped_events/, detail);
        assert.doesNotMatch(detail, /tool_calls|model_calls|metric_points|Seq Scan/, detail);
        assert.doesNotMatch(detail, /Bitmap Heap Scan on sessions/, "no session but by its key");
      });
    } finally {
      await sql.end();
    }
  },
});
