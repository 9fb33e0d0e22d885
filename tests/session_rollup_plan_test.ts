/**
 * Query plans of the session lists the session_actors rollup answers
 * (`?actor=`, `?team=`, `?agent=`, issue #16): each walk goes down the
 * actor's or the agent's index from the cursor, each row it takes is checked
 * against its session's other rows by the primary key, and the page's rows
 * are summed by the primary key. No statement reads tool_calls, scans
 * session_actors or groups the organization's calls; a time filter still
 * falls back to the calls' grouping. SQLite: EXPLAIN QUERY PLAN on an empty
 * store (no statistics: the plan must not depend on them). PostgreSQL:
 * EXPLAIN over 24,000 rollup rows after ANALYZE.
 */
import assert from "node:assert/strict";
import { connectPostgres, numberPlaceholders } from "../src/store/postgres/client.ts";
import { migratePostgres } from "../src/store/postgres/migrate.ts";
import { postgresQueries } from "../src/store/postgres/reader.ts";
import { openDataDir } from "../src/store/sqlite/data_dir.ts";
import { openDatabase } from "../src/store/sqlite/database.ts";
import { sqliteQueries } from "../src/store/sqlite/reader.ts";
import type { PageKey, SessionFilters, TelemetryQueries } from "../src/store/telemetry_queries.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";
import ingestSql from "../sql/sqlite/ingest.sql" with { type: "text" };
import retentionSql from "../sql/sqlite/retention.sql" with { type: "text" };
import { parseNamedSql } from "../src/store/named_sql.ts";

const CURSOR: PageKey = [1_700_000_000_000, "s_cursor"];

/** Each rollup filter and the index its walks go down. */
const CASES: [string, SessionFilters, "actor" | "agent", number][] = [
  ["actor", { actor: "act_7" }, "actor", 1],
  ["team of three", { team: ["act_1", "act_2", "act_3"] }, "actor", 3],
  ["agent", { agent: "codex_exec" }, "agent", 1],
  ["actor and agent", { actor: "act_7", agent: "codex_exec" }, "actor", 1],
];

function statement(queries: TelemetryQueries, filters: SessionFilters, after: PageKey | null) {
  return queries.sessionsPage("org_1", filters, after, 50);
}

Deno.test("SQLite: rollup session lists walk the actor's or agent's index and look up by key", async (t) => {
  const dir = await Deno.makeTempDir();
  const data = await openDataDir(dir, { redactSecrets: true });
  const db = openDatabase(`${dir}/telemetry.db`);
  const plan = (sql: string, params: (string | number | null)[]) => {
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
    return rows.map((row) => row.detail).join("\n");
  };
  const pagePlan = (filters: SessionFilters, after: PageKey | null) => {
    const { sql, params } = statement(sqliteQueries, filters, after);
    return plan(sql, params);
  };
  try {
    for (const [name, filters, index, walks] of CASES) {
      await t.step(name, () => {
        for (const after of [null, CURSOR]) {
          const detail = pagePlan(filters, after);
          const walk = new RegExp(
            `SEARCH r USING COVERING INDEX session_actors_by_${index} \\(org_id=\\? AND ${index}${
              index === "agent" ? "_system" : "_id"
            }=\\?${after ? " AND \\(last_seen,session_id\\)<\\(\\?,\\?\\)" : ""}\\)`,
            "g",
          );
          assert.equal(detail.match(walk)?.length, walks, detail);
          const check = /SEARCH x USING PRIMARY KEY \(org_id=\? AND session_id=\?/g;
          assert.equal(detail.match(check)?.length, walks, detail);
          assert.match(detail, /SEARCH r USING PRIMARY KEY \(org_id=\? AND session_id=\?/, detail);
          assert.match(
            detail,
            /SEARCH s USING PRIMARY KEY \(org_id=\? AND session_id=\?\)/,
            detail,
          );
          assert.doesNotMatch(detail, /tool_calls|SCAN (r|x|s|session_actors)\b/, detail);
        }
      });
    }
    await t.step(
      "domain: the newest sessions, checked by the domain's index, then its sessions",
      () => {
        for (const after of [null, CURSOR]) {
          const detail = pagePlan({ domain: "docs.python.org" }, after);
          const walk =
            /SEARCH sessions USING COVERING INDEX sessions_by_last_seen \(org_id=\? AND last_seen>\?/g;
          assert.equal(detail.match(walk)?.length, 2, detail);
          assert.match(
            detail,
            /SEARCH d USING COVERING INDEX domain_hits_by_domain \(org_key=\? AND domain=\? AND session_key=\?\)/,
            detail,
          );
          // The domain's own sessions: read inside the loop over `walk`, so only when it asks.
          assert.match(
            detail,
            /SEARCH keyed_domain_hits USING COVERING INDEX domain_hits_by_domain \(org_key=\? AND domain=\?\)\n(SCALAR SUBQUERY \d+\n.*\n)?SCAN walk\nSCAN d/,
            detail,
          );
          assert.match(
            detail,
            /SEARCH r USING PRIMARY KEY \(org_id=\? AND session_id=\?\)/,
            detail,
          );
          assert.doesNotMatch(
            detail,
            /\bcalls\b|SCAN (sessions|domain_hits|session_actors|s)\b/,
            detail,
          );
        }
      },
    );
    await t.step("a session's rollup rows are recounted from that session's calls only", () => {
      const ingest = parseNamedSql(ingestSql);
      const clear = plan(ingest["clear_session_actors"]!, ["org_1", "s_1"]);
      assert.match(
        clear,
        /SEARCH session_actors USING (COVERING )?(INDEX \w+|PRIMARY KEY) \(org_id=\? AND session_id=\?/,
        clear,
      );
      // The session's key, then its calls (schema 15's keyed calls).
      const recount = plan(ingest["recount_session_actors"]!, ["org_1", "s_1"]);
      assert.match(
        recount,
        /SEARCH calls USING INDEX calls_by_session \(session_key=\?\)/,
        recount,
      );
      assert.doesNotMatch(
        recount,
        /SCAN (calls|session_actors|\w+_keys)\b|calls_by_actor/,
        recount,
      );
    });
    await t.step("a session's counters are recounted from that session's calls only", () => {
      const detail = plan(parseNamedSql(ingestSql)["recount_session"]!, [1, "org_1", "s_1"]);
      const reads = detail.match(/\bSEARCH calls\b.*/g) ?? [];
      assert.deepEqual(
        reads,
        ["SEARCH calls USING INDEX calls_by_session (session_key=?)"],
        detail,
      );
      assert.doesNotMatch(detail, /SCAN (calls|\w+_keys)\b/, detail);
    });
    // The writer runs these while every organization's ingest waits: an extra
    // equality (`outcome = ?`) once steered a recount to an organization-wide
    // index, 8.5 s per count at 10M calls.
    await t.step("every writer statement that names a session reads only its rows", () => {
      const named = [
        ...Object.entries(parseNamedSql(ingestSql)),
        ...Object.entries(parseNamedSql(retentionSql)),
      ];
      let checked = 0;
      for (const [name, text] of named) {
        if (text.includes("{{") || !/\bsession_id = \?/.test(text)) continue;
        const numbered = [...text.matchAll(/\?(\d+)/g)].map((m) => Number(m[1]));
        const count = Math.max(0, ...numbered, (text.match(/\?(?!\d)/g) ?? []).length);
        const detail = plan(text, Array(count).fill("x"));
        checked++;
        assert.doesNotMatch(
          detail,
          /\bSCAN (calls|model_calls|sessions|session_actors|decisions|\w+_keys)\b|_by_(time|tool_name|tool_type|category|outcome|actor|agent)\b/,
          `${name}\n${detail}`,
        );
      }
      assert.ok(checked >= 8, `${checked} statements checked`);
    });
    await t.step("a time filter falls back to the calls' grouping", () => {
      const detail = pagePlan({ actor: "act_7", before: 1 }, null);
      assert.match(
        detail,
        /SEARCH calls USING INDEX calls_by_actor \(actor_key=\? AND ts<\?\)/,
        detail,
      );
      assert.doesNotMatch(detail, /session_actors/, detail);
    });
  } finally {
    db.close();
    await data.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "PostgreSQL: rollup session lists walk the actor's or agent's index and look up by key",
  ignore: !pgTestUrl(),
  async fn(t) {
    await using database = await createTestDatabase();
    const sql = connectPostgres(database.url, { max: 1 });
    try {
      await migratePostgres(sql);
      // 40 actors × 200 sessions × 3 agents, one organization, and the sessions' rows.
      await sql.unsafe(`
        INSERT INTO session_actors (org_id, session_id, actor_id, agent_system, first_seen,
          last_seen, calls, errors, oks, model_key)
        SELECT 'org_1', 's_' || a || '_' || s, 'act_' || a, g, 1700000000000 + s * 1000,
          1700000000000 + s * 1000 + a, 3, 1, 2, NULL
        FROM generate_series(1, 40) AS a, generate_series(1, 200) AS s,
          unnest(ARRAY['claude-code', 'codex_exec', 'gemini-cli']) AS g`);
      await sql.unsafe(`
        INSERT INTO sessions (org_id, session_id, seq, actor_id, first_seen, last_seen)
        SELECT org_id, session_id, 1, min(actor_id), min(first_seen), max(last_seen)
        FROM session_actors GROUP BY org_id, session_id`);
      // One call per session; a third of them reached api.github.com.
      await sql.unsafe(`
        INSERT INTO tool_calls (id, org_id, seq, session_id, actor_id, ts, tool_name, tool_type,
          category, outcome, agent_system, source)
        SELECT 'c_' || session_id, org_id, 1, session_id, actor_id, last_seen, 'Bash', 'builtin',
          'code_exec', 'ok', 'claude-code', 'otlp_logs'
        FROM sessions`);
      await sql.unsafe(`
        INSERT INTO domain_hits (call_id, domain, scheme, org_id, seq, session_id, ts)
        SELECT id, 'api.github.com', 'https', org_id, 1, session_id, ts FROM tool_calls
        WHERE ts % 3 = 0`);
      // Two dimensions per session, which a page reads by the session's key.
      await sql.unsafe(`
        INSERT INTO session_dimensions (org_id, session_id, key, value)
        SELECT org_id, session_id, key, key || '-' || (last_seen % 7)
        FROM sessions, unnest(ARRAY['team.id', 'repository']) AS key`);
      await sql.unsafe("ANALYZE");
      const plan = async (filters: SessionFilters, after: PageKey | null) => {
        const { sql: text, params } = statement(postgresQueries, filters, after);
        const rows = await sql.unsafe<{ "QUERY PLAN": string }[]>(
          `EXPLAIN ${numberPlaceholders(text)}`,
          params as string[],
        );
        return rows.map((row) => row["QUERY PLAN"]).join("\n");
      };
      for (const [name, filters, index, walks] of CASES) {
        await t.step(name, async () => {
          for (const after of [null, CURSOR]) {
            const detail = await plan(filters, after);
            const walk = new RegExp(`Index (Only )?Scan using session_actors_by_${index}`, "g");
            assert.equal(detail.match(walk)?.length, walks, detail);
            assert.match(detail, /Nested Loop Anti Join/, detail);
            assert.match(
              detail,
              /Index (Only )?Scan using session_actors_pkey on session_actors x/,
            );
            assert.match(
              detail,
              /Index (Only )?Scan using session_actors_pkey on session_actors r/,
            );
            assert.doesNotMatch(detail, /tool_calls|Seq Scan|Bitmap Heap Scan on session_actors/);
            assert.match(
              detail,
              /Index (Only )?Scan using session_dimensions_pkey on session_dimensions m/,
              detail,
            );
          }
        });
      }
      await t.step("domain: the newest sessions, then the domain's own only if asked", async () => {
        for (const after of [null, CURSOR]) {
          const detail = await plan({ domain: "api.github.com" }, after);
          assert.match(detail, /Index Only Scan using sessions_by_last_seen on sessions/, detail);
          assert.match(detail, /Index Only Scan using domain_hits_by_domain on domain_hits d/);
          // The domain's own sessions run under a one-time filter on the walk's answer.
          assert.match(detail, /One-Time Filter: \(NOT \$\d+\)/, detail);
          assert.doesNotMatch(detail, /tool_calls|Seq Scan on session_actors/, detail);
          assert.match(
            detail,
            /Index (Only )?Scan using session_dimensions_pkey on session_dimensions m/,
            detail,
          );
        }
      });
    } finally {
      await sql.end();
    }
  },
});
