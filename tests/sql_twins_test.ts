/**
 * Twin SQL files — the same file name under `sql/sqlite/` and `sql/postgres/`,
 * or an engine's variant of a replica insight under `sql/insights/<engine>/` —
 * declare the same statement names, so that code looking a statement up by
 * name finds it on either engine. Where an engine's algorithm differs (SQLite
 * writes row by row, PostgreSQL in bulk over arrays and with row locks), the
 * statements only one engine has are listed here with the reason: a statement
 * added to one twin and not the other fails until it is added or listed.
 */
import assert from "node:assert/strict";
import { parseNamedSql } from "../src/store/named_sql.ts";

const SQL = new URL("../sql/", import.meta.url);

/** Statements one engine's twin has and the other's lacks, by design. */
const ENGINE_ONLY: Readonly<
  Record<string, { why: string; sqlite: readonly string[]; postgres: readonly string[] }>
> = {
  "keys.sql": {
    why: "PostgreSQL locks the rows a key command changes (several nodes write); SQLite " +
      "reads them inside its single writer's transaction",
    sqlite: [
      "find_actor_revocation",
      "find_api_key_revocation",
      "find_member",
      "find_member_email",
    ],
    postgres: ["lock_actor", "lock_api_key", "lock_member_for_key", "lock_member_for_removal"],
  },
  "retention.sql": {
    why: "SQLite deletes row by row in bounded batches; PostgreSQL deletes each kind in one " +
      "statement over arrays (a call's and a dropped session's decisions and dimensions inside " +
      "those statements)",
    sqlite: [
      "delete_call_decision",
      "delete_metric_point",
      "delete_model_call",
      "delete_session_decisions",
      "delete_session_dimensions",
      "delete_session_key",
      "delete_session_prompt_keys",
      "delete_tool_call",
      "drop_empty_session",
      "oldest_metric_points",
      "oldest_time",
      "recount_session_cost",
    ],
    postgres: [
      "delete_old_metric_points",
      "delete_old_model_calls",
      "delete_old_tool_calls",
      "drop_empty_sessions",
      "recount_session_costs",
    ],
  },
  "ingest.sql": {
    why: "SQLite writes each row as the batch logic asks (one writer, the `seq` in a counter " +
      "row); PostgreSQL locks the sessions, reads ahead and writes each table in one statement " +
      "over arrays (the `seq` from a sequence)",
    sqlite: [
      // Schema 15 keys SQLite's calls by integers (18 their prompts); PostgreSQL keeps the ids.
      "actor_key",
      "add_actor_key",
      "add_org_key",
      "add_prompt_key",
      "add_session_key",
      "add_to_session",
      "add_to_session_actor",
      "annotate_decision",
      "annotate_trace",
      "credential_flag",
      "delete_tool_call",
      "ensure_session",
      "fill_model_call_cost",
      "find_decision",
      "find_model_call",
      "find_session",
      "find_tool_call",
      "insert_domain_hit",
      "insert_metric_point",
      "insert_model_call",
      "insert_risk_flag",
      "insert_tombstone",
      "insert_tool_call",
      "org_key",
      "prompt_key",
      "read_seq",
      "recount_session",
      "session_key",
      "set_session_parent",
      "set_session_provider",
      "update_call_text",
      "upsert_decision",
      "write_seq",
    ],
    postgres: [
      "annotate_decisions",
      "annotate_traces",
      "calls_after",
      "change_session_actors",
      "change_sessions",
      "delete_tool_calls",
      "fill_model_call_costs",
      "insert_domain_hits",
      "insert_metric_points",
      "insert_model_calls",
      "insert_risk_flags",
      "insert_sessions",
      "insert_tombstones",
      "insert_tool_calls",
      "lock_sessions",
      "probe",
      "probe_write",
      "recount_sessions",
      "reserve_seqs",
      "set_session_parents",
      "set_session_providers",
      "stored_decisions",
      "stored_model_calls",
      "stored_sessions",
      "stored_tool_calls",
      "update_call_texts",
      "upsert_decisions",
    ],
  },
  "replica_source.sql": {
    why: "SQLite's replica reads chunks by `seq`; PostgreSQL's by transaction id and snapshot, " +
      "since concurrent writers commit `seq` values out of order; SQLite's rowids tell rows " +
      "stored since the last chunk (no merge by key); PostgreSQL counts a catch-up's rows " +
      "before it starts (its seqs run ahead of them)",
    sqlite: [
      "current_seq",
      "max_rowids",
      "nth_metric_point_seq",
      "nth_model_call_seq",
      "nth_tool_call_seq",
      "tombstones_range",
    ],
    postgres: [
      "current_snapshot",
      "nth_metric_point_key",
      "nth_model_call_key",
      "nth_tool_call_key",
      "rows_in_range",
      "seq_reached",
      "source_identity",
      "tombstones_page",
    ],
  },
};

/** The `.sql` file names of a folder under `sql/`. */
function sqlFiles(folder: string): string[] {
  return [...Deno.readDirSync(new URL(folder, SQL))]
    .filter((entry) => entry.isFile && entry.name.endsWith(".sql"))
    .map((entry) => entry.name)
    .sort();
}

/** The statement names a file declares, sorted. */
function statementNames(path: string): string[] {
  return Object.keys(parseNamedSql(Deno.readTextFileSync(new URL(path, SQL)))).sort();
}

/** The names in `names` that `others` lacks. */
function missingFrom(names: readonly string[], others: readonly string[]): string[] {
  return names.filter((name) => !others.includes(name));
}

Deno.test("twin SQL files of SQLite and PostgreSQL declare the same statement names", () => {
  const twins = sqlFiles("sqlite/").filter((name) => sqlFiles("postgres/").includes(name));
  assert.ok(twins.includes("queries.sql"), "queries.sql has no twin");
  for (const file of twins) {
    const sqlite = statementNames(`sqlite/${file}`);
    const postgres = statementNames(`postgres/${file}`);
    assert.ok(sqlite.length > 0, `sql/sqlite/${file} declares no statement`);
    const expected = ENGINE_ONLY[file] ?? { sqlite: [], postgres: [] };
    assert.deepEqual(
      missingFrom(sqlite, postgres),
      [...expected.sqlite].sort(),
      `sql/sqlite/${file}: statements PostgreSQL's twin lacks (add them there, or list them)`,
    );
    assert.deepEqual(
      missingFrom(postgres, sqlite),
      [...expected.postgres].sort(),
      `sql/postgres/${file}: statements SQLite's twin lacks (add them there, or list them)`,
    );
  }
  for (const file of Object.keys(ENGINE_ONLY)) {
    assert.ok(twins.includes(file), `ENGINE_ONLY names ${file}, which has no twin: remove it`);
  }
});

Deno.test("an engine's variant of a replica insight declares the insight's statement names", () => {
  const insights = sqlFiles("insights/");
  for (const engine of ["sqlite", "postgres"]) {
    const variants = sqlFiles(`insights/${engine}/`);
    for (const file of variants) {
      assert.ok(insights.includes(file), `sql/insights/${engine}/${file} varies no insight`);
      assert.deepEqual(
        statementNames(`insights/${engine}/${file}`),
        statementNames(`insights/${file}`),
        `sql/insights/${engine}/${file}`,
      );
    }
  }
});

Deno.test("an engine's variant of a replica insight is no copy of it", () => {
  for (const engine of ["sqlite", "postgres"]) {
    for (const file of sqlFiles(`insights/${engine}/`)) {
      const variant = parseNamedSql(
        Deno.readTextFileSync(new URL(`insights/${engine}/${file}`, SQL)),
      );
      const insight = parseNamedSql(Deno.readTextFileSync(new URL(`insights/${file}`, SQL)));
      assert.notDeepEqual(
        variant,
        insight,
        `sql/insights/${engine}/${file} runs the same SQL as sql/insights/${file}: delete it`,
      );
    }
  }
});
