import assert from "node:assert/strict";
import { openDataDir } from "../src/store/sqlite/data_dir.ts";
import { openDatabase } from "../src/store/sqlite/database.ts";
import { sqliteQueries } from "../src/store/sqlite/reader.ts";
import type { CallFilters, ReadStatement, SessionFilters } from "../src/store/telemetry_queries.ts";
import { parseNamedSql } from "../src/store/named_sql.ts";
import retentionSql from "../sql/sqlite/retention.sql" with { type: "text" };

function plan(db: ReturnType<typeof openDatabase>, statement: ReadStatement): string {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${statement.sql}`).all(...statement.params) as {
    detail: string;
  }[];
  return rows.map((row) => row.detail).join("\n");
}

function assertIndexed(detail: string, table: string) {
  assert.match(detail, new RegExp(`SEARCH ${table} USING (COVERING )?INDEX`), detail);
  assert.doesNotMatch(detail, new RegExp(`SCAN ${table}\\b`), detail);
  assert.doesNotMatch(detail, /TEMP B-TREE/, detail);
}

/**
 * A tool-call index holds the filter's key and the time, not the call id
 * (sql/sqlite/telemetry_0011_narrow_call_indexes.sql): the index gives the
 * order by time and only the calls of one millisecond are sorted by id.
 */
function assertIndexedByTime(detail: string, table: string) {
  assert.match(detail, new RegExp(`SEARCH ${table} USING (COVERING )?INDEX`), detail);
  assert.doesNotMatch(detail, new RegExp(`SCAN ${table}\\b`), detail);
  // The keys of a call are found by their own unique indexes, never scanned.
  assert.doesNotMatch(detail, /SCAN \w+_keys\b/, detail);
  const sorts = detail.split("\n").filter((line) => line.includes("TEMP B-TREE"));
  assert.deepEqual(
    sorts.map((line) => /^USE TEMP B-TREE FOR (LAST TERM|RIGHT PART) OF ORDER BY$/.test(line)),
    sorts.map(() => true),
    detail,
  );
}

Deno.test("list and cursor queries use an index for filter and order, sorting at most one millisecond's calls", async (t) => {
  const dir = await Deno.makeTempDir();
  const data = await openDataDir(dir, { redactSecrets: true });
  const db = openDatabase(`${dir}/telemetry.db`);
  try {
    // No ANALYZE: the service never runs it; the planner has what schema 15 wrote.
    const cursor: [number, string] = [1_700_000_000_000, "tc_x"];
    await t.step("sessions, unfiltered, first page and cursor page", () => {
      assertIndexed(plan(db, sqliteQueries.sessionsPage("org", {}, null, 50)), "sessions");
      assertIndexed(plan(db, sqliteQueries.sessionsPage("org", {}, cursor, 50)), "sessions");
    });
    const filters: [string, CallFilters][] = [
      ["none", {}],
      ["session", { sessionId: "s" }],
      ["tool name", { toolName: "Bash" }],
      ["tool type", { toolType: "mcp" }],
      ["category", { category: "file_read" }],
      ["outcome", { outcome: "error" }],
      ["actor", { actor: "act_1" }],
    ];
    await t.step(
      "filtered sessions read through the filter's index, then one lookup per session",
      () => {
        // With a time filter (the session_actors rollup answers `actor` alone:
        // tests/session_rollup_plan_test.ts).
        const byActor = plan(
          db,
          sqliteQueries.sessionsPage("org", { actor: "act_1", before: 2 }, null, 50),
        );
        assert.match(byActor, /SEARCH calls USING INDEX calls_by_actor/, byActor);
        assert.match(
          byActor,
          /SEARCH s USING PRIMARY KEY \(org_id=\? AND session_id=\?\)/,
          byActor,
        );
        const window = { after: 1, before: 2 };
        const byTime = plan(db, sqliteQueries.sessionsPage("org", window, cursor, 50));
        assert.match(byTime, /SEARCH calls USING INDEX calls_by_time/, byTime);
        // `after` alone: the page's sessions from the session index, then their recent calls.
        const recent = plan(db, sqliteQueries.sessionsPage("org", { after: 1 }, cursor, 50));
        assert.match(recent, /SEARCH sessions USING INDEX sessions_by_last_seen/, recent);
        assert.match(recent, /SEARCH calls USING INDEX calls_by_session .*ts>\?/, recent);
        assert.doesNotMatch(recent, /SCAN (sessions|calls|\w+_keys)\b/, recent);
      },
    );
    await t.step("retention and the agents facet walk an index too", () => {
      const retention = parseNamedSql(retentionSql);
      for (
        const [name, params] of [["oldest_tool_calls", ["org", 0, 100]], ["oldest_model_calls", [
          "org",
          0,
          100,
        ]]] as const
      ) {
        const detail = plan(db, { sql: retention[name]!, params: [...params] });
        assert.match(detail, /SEARCH \w+ USING (COVERING )?INDEX/, detail);
        assert.doesNotMatch(detail, /TEMP B-TREE/, detail);
      }
      const facet = plan(db, { sql: sqliteQueries.sql("facet_agents"), params: ["org"] });
      assert.doesNotMatch(facet, /SCAN (sessions|tool_calls)\b/, facet);
    });
    await t.step("a session's model calls come from its own index range, sorted alone", () => {
      const detail = plan(db, {
        sql: sqliteQueries.sql("session_model_calls"),
        params: ["o", "s"],
      });
      // Without schema 15's estimates the index was model_calls_by_time: every model call of
      // the organization.
      assert.match(
        detail,
        /^SEARCH keyed_model_calls USING INDEX model_calls_by_session \(session_key=\?\)$/m,
        detail,
      );
      assert.doesNotMatch(
        detail,
        /model_calls_by_time|SCAN (keyed_model_calls|\w+_keys)\b/,
        detail,
      );
    });
    for (const [name, filter] of filters) {
      await t.step(`tool calls, ${name}, first page and cursor page`, () => {
        assertIndexedByTime(
          plan(db, sqliteQueries.toolCallsPage("org", filter, null, 50)),
          "calls",
        );
        assertIndexedByTime(
          plan(db, sqliteQueries.toolCallsPage("org", filter, cursor, 50)),
          "calls",
        );
      });
    }
    await t.step(
      "a dimension filter: a few sessions' calls along the session index, else the time index",
      () => {
        const dims: [string, string][][] = [[["team.id", "web"]], [["team.id", "web"], [
          "department",
          "eng",
        ]]];
        const filters = dims.flatMap((dims) => [{ dims }, { dims, outcome: "error" }]);
        for (const filter of filters) {
          const unnarrowed = filter.outcome ? "calls_by_outcome" : "calls_by_time";
          for (const after of [null, cursor]) {
            for (
              const detail of [
                plan(db, sqliteQueries.toolCallsPage("org", filter, after, 50)),
                plan(db, sqliteQueries.exportToolCallsPage("org", filter, after, 1000)),
              ]
            ) {
              const [few, many] = detail.split("CO-ROUTINE many");
              // Without the session index, a value of one old session walked
              // the organization's whole time index (650 ms at 1M calls).
              assert.match(few!, /SEARCH calls USING INDEX calls_by_session /, detail);
              assert.match(
                many!,
                new RegExp(`SEARCH calls USING INDEX ${unnarrowed} `),
                detail,
              );
              assert.match(few!, /SEARCH s USING PRIMARY KEY \(org_id=\? AND session_id=\?\)/);
              assert.doesNotMatch(
                detail,
                /SCAN (calls|\w+_keys|sessions|session_dimensions)\b/,
                detail,
              );
            }
          }
        }
      },
    );
    await t.step("dimensions come along session_dimensions' primary key, per row", () => {
      const sessionFilters: SessionFilters[] = [
        {}, // sessions_page
        { after: 1 }, // recent_sessions_page (two branches)
        { after: 1, before: 2 }, // filtered_sessions_page
        { actor: "act_1", before: 2 },
        { dims: [["team.id", "web"]] },
        { actor: "act_1" }, // rollup_sessions_page
        { team: ["act_1", "act_2"], agent: "claude-code" },
        { agent: "claude-code" },
        { domain: "pypi.org" },
      ];
      const statements = [
        ...sessionFilters.map((filter) => sqliteQueries.sessionsPage("org", filter, cursor, 50)),
        ...[...filters.map(([, filter]) => filter), { dims: [["team.id", "web"]] }].map((
          filter,
        ) => sqliteQueries.toolCallsPage("org", filter as CallFilters, cursor, 50)),
        // The details: the session and its children, the tool call.
        ...sqliteQueries.sessionDetail("org", "s").filter(({ sql }) =>
          sql.includes("AS dimensions")
        ),
        sqliteQueries.toolCallDetail("org", "tc_x"),
      ];
      for (const statement of statements) {
        const detail = plan(db, statement);
        const lookups = detail.match(
          /CORRELATED SCALAR SUBQUERY \d+\nSEARCH m USING PRIMARY KEY \(org_id=\? AND session_id=\?\)$/gm,
        );
        assert.deepEqual(lookups?.length, statement.sql.split("AS dimensions").length - 1, detail);
        assert.doesNotMatch(detail, /SCAN (m|session_dimensions)\b/, detail);
      }
    });
    for (const [name, filter] of filters) {
      await t.step(`the export of tool calls, ${name}, first page and a resumed page`, () => {
        for (const after of [null, cursor]) {
          const detail = plan(db, sqliteQueries.exportToolCallsPage("org", filter, after, 1000));
          assertIndexedByTime(detail, "calls");
          // Flags and domains along their primary keys, the call's id (domains: its key) first.
          assert.match(detail, /SEARCH f USING PRIMARY KEY \(call_id=\?\)/, detail);
          assert.match(detail, /SEARCH d USING PRIMARY KEY \(call_key=\?\)/, detail);
        }
      });
    }
    await t.step("the export of sessions walks sessions_by_last_seen from its place", () => {
      const sessionFilters: SessionFilters[] = [
        {},
        { after: 1, before: 2 },
        { actor: "act_1", agent: "claude-code" },
        { team: ["act_1", "act_2"] },
        { domain: "pypi.org" },
      ];
      for (const filter of sessionFilters) {
        for (const after of [null, cursor]) {
          const detail = plan(db, sqliteQueries.exportSessionsPage("org", filter, after, 1000));
          assertIndexed(detail, "s");
          assert.match(detail, /USING INDEX sessions_by_last_seen/, detail);
          // A resumed page seeks to its place.
          if (after !== null) assert.match(detail, /org_id=\? AND \(?last_seen/, detail);
        }
      }
    });
  } finally {
    db.close();
    await data.close();
    await Deno.remove(dir, { recursive: true });
  }
});
