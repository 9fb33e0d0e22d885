/**
 * The column lists of `src/store/table_columns.ts` against the real schema of
 * both engines: each table's insert statement, built from its list, stores a
 * row whose every column holds a value of its own, and reading the row back
 * by column name gives each value where it belongs. The lists cover every
 * column of the tables the write path inserts whole, so a column added by a
 * migration and not to its list (or the reverse) fails here.
 *
 * The roles of the tool-call columns (`TOOL_CALL_ROLES`) against every other
 * place a column is named: its cap in `TEXT_LIMITS`, both engines' rescan
 * statements and the texts detection reads, both engines' statements that
 * merge a log and its span. A column added to one of them and not to its
 * role (or the reverse) fails here.
 */
import assert from "node:assert/strict";
import type { DatabaseSync } from "node:sqlite";
import ingestSql from "../sql/sqlite/ingest.sql" with { type: "text" };
import postgresIngestSql from "../sql/postgres/ingest.sql" with { type: "text" };
import { CALL_TEXT_NAMES } from "../src/detect/mod.ts";
import { TEXT_LIMITS } from "../src/ingest/limits.ts";
import { namedSql, parseNamedSql } from "../src/store/named_sql.ts";
import { connectPostgres } from "../src/store/postgres/client.ts";
import { migratePostgres } from "../src/store/postgres/migrate.ts";
import { columns } from "../src/store/postgres/_ingest_plan.ts";
import { run } from "../src/store/postgres/_write_tx.ts";
import { CallKeys } from "../src/store/sqlite/call_keys.ts";
import { migrate, NamedStatements, openDatabase } from "../src/store/sqlite/database.ts";
import { telemetryMigrations } from "../src/store/sqlite/migrations.ts";
import {
  type BoundValue,
  type ColumnSpec,
  DOMAIN_HITS,
  METRIC_POINTS,
  MODEL_CALLS,
  NEW_SESSIONS,
  RISK_FLAGS,
  type TableColumns,
  tableColumns,
  TOOL_CALL_ROLES,
  TOOL_CALLS,
  type ToolCallColumnRole,
  withColumnLists,
} from "../src/store/table_columns.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";

/** Each table with its insert statement per engine, in an order the foreign keys accept. */
const TABLES: readonly {
  columns: TableColumns<ColumnSpec>;
  sqlite: string;
  postgres: string;
  /** Whether the list names every column of the table (sessions: the rest are counters). */
  whole: boolean;
}[] = [
  { columns: NEW_SESSIONS, sqlite: "ensure_session", postgres: "insert_sessions", whole: false },
  { columns: TOOL_CALLS, sqlite: "insert_tool_call", postgres: "insert_tool_calls", whole: true },
  {
    columns: MODEL_CALLS,
    sqlite: "insert_model_call",
    postgres: "insert_model_calls",
    whole: true,
  },
  { columns: RISK_FLAGS, sqlite: "insert_risk_flag", postgres: "insert_risk_flags", whole: true },
  {
    columns: DOMAIN_HITS,
    sqlite: "insert_domain_hit",
    postgres: "insert_domain_hits",
    whole: true,
  },
  {
    columns: METRIC_POINTS,
    sqlite: "insert_metric_point",
    postgres: "insert_metric_points",
    whole: true,
  },
];

/** The id of the one tool call, which the flag and the domain hit refer to. */
const CALL_ID = "tool_calls.id";

/** A row whose every column holds a value no other column holds. */
function distinctRow(table: TableColumns<ColumnSpec>): Record<string, BoundValue> {
  const row: Record<string, BoundValue> = {};
  table.names.forEach((name, i) => {
    const kind = table.kinds[i]!;
    if (name === "outcome") row[name] = "ok";
    else if (name === "call_id") row[name] = CALL_ID;
    // Schema 19: SQLite's domain hit takes its organization and session from its call's keys.
    else if (table === DOMAIN_HITS && (name === "org_id" || name === "session_id")) {
      row[name] = `tool_calls.${name}`;
    } else if (kind.startsWith("text")) row[name] = `${table.table}.${name}`;
    else if (kind.startsWith("int")) row[name] = 1000 + i;
    else row[name] = i + 0.25;
  });
  return row;
}

/** Whether each listed column holds the value written to it; and the table's other columns. */
function checkStored(
  table: TableColumns<ColumnSpec>,
  stored: Record<string, unknown>,
  whole: boolean,
): void {
  const written = distinctRow(table);
  for (const name of table.names) {
    assert.equal(stored[name], written[name], `${table.table}.${name}`);
  }
  if (whole) {
    assert.deepEqual(
      Object.keys(stored).filter((name) => name !== "txid").sort(),
      [...table.names].sort(),
      `${table.table}: columns of the table vs its column list`,
    );
  }
}

Deno.test("a table's values come in the order of its column names", () => {
  const table = tableColumns("t", { b: "text", a: "int?", c: "real?" });
  assert.deepEqual(table.names, ["b", "a", "c"]);
  assert.deepEqual(table.kinds, ["text", "int?", "real?"]);
  assert.deepEqual(table.values({ a: 1, b: "x", c: null }), ["x", 1, null]);
  assert.throws(() => tableColumns("t", { "a); DROP TABLE t; --": "text" }), /Invalid column/);
});

Deno.test("column placeholders expand per engine and an unknown table fails at start-up", () => {
  const expanded = withColumnLists({
    insert: "INSERT INTO domain_hits ({{domain_hits.columns}}) VALUES ({{domain_hits.params}})",
  }, (position, kind) => `$${position}:${kind}`);
  assert.equal(
    expanded.insert,
    "INSERT INTO domain_hits (call_id, domain, scheme, org_id, seq, session_id, ts) " +
      "VALUES ($1:text, $2:text, $3:text, $4:text, $5:int, $6:text, $7:int)",
  );
  assert.throws(
    () => withColumnLists({ bad: "INSERT INTO x ({{nope.columns}})" }, () => "?"),
    /No column list for table: "nope"/,
  );
});

/**
 * Runs `use` on a new, migrated telemetry.db with the ingest statements and
 * the writer's keys: a call's row holds keys where tool_calls shows ids
 * (schema 15), and its prompt's key (schema 18).
 */
function withTelemetryDb(
  use: (db: DatabaseSync, statements: Record<string, string>, keys: CallKeys) => void,
): void {
  const dir = Deno.makeTempDirSync();
  const db = openDatabase(`${dir}/telemetry.db`);
  try {
    migrate(db, telemetryMigrations);
    const statements = withColumnLists(parseNamedSql(ingestSql), () => "?");
    use(db, statements, new CallKeys(new NamedStatements(db, statements)));
  } finally {
    db.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("SQLite stores each listed column where its list says", () => {
  withTelemetryDb((db, statements, keys) => {
    for (const { columns: table, sqlite } of TABLES) {
      const values = table.values(distinctRow(table) as never) as (string | number | null)[];
      db.prepare(namedSql(statements, sqlite)).run(
        ...(table === TOOL_CALLS
          ? keys.keyedToolCall(values)
          : table === MODEL_CALLS
          ? keys.keyed(values)
          : values),
      );
    }
    for (const { columns: table, whole } of TABLES) {
      const stored = db.prepare(`SELECT * FROM ${table.table}`).all();
      assert.equal(stored.length, 1, table.table);
      checkStored(table, stored[0] as Record<string, unknown>, whole);
    }
  });
});

Deno.test("SQLite stores a call's prompt as a key and a tool_use_id equal to its call id as ''", () => {
  withTelemetryDb((db, statements, keys) => {
    const calls: [string, string | null, string | null][] = [
      ["same", "toolu_1", "toolu_1"],
      ["other", "call_2", "toolu_2"],
      ["none", "call_3", null],
    ];
    // Two calls of one prompt, one of another session's prompt of the same id, one without.
    const prompts = ["prompt-1", "prompt-1", "prompt-1", null];
    const sessions = ["s1", "s1", "s2", "s1"];
    for (const [i, [id, callId, useId]] of [...calls, ["bare", null, null]].entries()) {
      const row = {
        ...distinctRow(TOOL_CALLS),
        id,
        "tool_call_id": callId,
        "tool_use_id": useId,
        "prompt_id": prompts[i],
        "session_id": sessions[i],
      };
      db.prepare(namedSql(statements, "insert_tool_call")).run(
        ...keys.keyedToolCall(TOOL_CALLS.values(row as never)) as (string | number | null)[],
      );
    }
    const read = (sql: string) =>
      Object.fromEntries(
        (db.prepare(sql).all() as { id: string; tool_use_id: string | null }[]).map((r) => [
          r.id,
          r.tool_use_id,
        ]),
      );
    assert.deepEqual(read("SELECT id, tool_use_id FROM calls"), {
      same: "",
      other: "toolu_2",
      none: null,
      bare: null,
    });
    assert.deepEqual(read("SELECT id, tool_use_id FROM tool_calls"), {
      same: "toolu_1",
      other: "toolu_2",
      none: null,
      bare: null,
    });
    // Schema 18: the prompt id is held once per session; the view gives it back.
    assert.deepEqual(
      { ...db.prepare("SELECT count(*) AS n FROM calls WHERE prompt_id IS NOT NULL").get() },
      { n: 0 },
    );
    assert.deepEqual(
      db.prepare(
        `SELECT s.session_id, p.prompt_id FROM prompt_keys AS p
         JOIN session_keys AS s ON s.session_key = p.session_key ORDER BY 1`,
      ).all().map((row) => ({ ...row })),
      [{ session_id: "s1", prompt_id: "prompt-1" }, { session_id: "s2", prompt_id: "prompt-1" }],
    );
    assert.deepEqual(
      db.prepare("SELECT id, prompt_id, session_id FROM tool_calls ORDER BY id").all()
        .map((row) => ({ ...row })),
      [
        { id: "bare", prompt_id: null, session_id: "s1" },
        { id: "none", prompt_id: "prompt-1", session_id: "s2" },
        { id: "other", prompt_id: "prompt-1", session_id: "s1" },
        { id: "same", prompt_id: "prompt-1", session_id: "s1" },
      ],
    );
  });
});

Deno.test({
  name: "PostgreSQL stores each listed column where its list says",
  ignore: !pgTestUrl(),
  async fn() {
    await using database = await createTestDatabase();
    const sql = connectPostgres(database.url, { max: 1 });
    try {
      await migratePostgres(sql);
      await sql.begin(async (tx) => {
        for (const { columns: table, postgres } of TABLES) {
          await run(tx, postgres, columns([table.values(distinctRow(table) as never)]));
        }
      });
      for (const { columns: table, whole } of TABLES) {
        const stored = await sql.unsafe(`SELECT * FROM ${table.table}`);
        assert.equal(stored.length, 1, table.table);
        checkStored(table, stored[0] as Record<string, unknown>, whole);
      }
    } finally {
      await sql.end();
    }
  },
});

/** An event field's column name: `mcpServerName` → `mcp_server_name`. */
function snakeCase(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The columns a named `UPDATE` sets, less `seq` (which every write sets). */
function setColumns(sql: Record<string, string>, name: string): string[] {
  const set = /\bSET\b([\s\S]*?)(?:\bFROM\b|\bWHERE\b)/.exec(namedSql(sql, name))![1]!;
  return set.split(",").map((part) => part.split("=")[0]!.trim()).filter((c) => c !== "seq");
}

/** The tool-call columns that have a role, sorted. */
function columnsWith(role: keyof ToolCallColumnRole): string[] {
  return Object.entries(TOOL_CALL_ROLES).filter(([, r]) => r[role]).map(([name]) => name).sort();
}

const SQLITE_INGEST = parseNamedSql(ingestSql);
const POSTGRES_INGEST = parseNamedSql(postgresIngestSql);

Deno.test("every tool_calls column has a role, in column order", () => {
  assert.deepEqual(Object.keys(TOOL_CALL_ROLES), TOOL_CALLS.names);
});

Deno.test("a tool_calls column takes its cap from its event field's TEXT_LIMITS entry", () => {
  TOOL_CALLS.names.forEach((name, i) => {
    const { limit } = TOOL_CALL_ROLES[name];
    const capped = Object.keys(TEXT_LIMITS).find((field) => snakeCase(field) === name);
    assert.equal(limit, capped ?? null, `${name}: its limit vs TEXT_LIMITS`);
    if (limit !== null) assert.ok(TOOL_CALLS.kinds[i]!.startsWith("text"), `${name}: not text`);
  });
});

Deno.test("the rescanned columns are those detection reads and both rescans rewrite", () => {
  const rescanned = columnsWith("rescanned");
  const detected = ["arguments", "result", ...CALL_TEXT_NAMES.map(snakeCase)].sort();
  assert.deepEqual(rescanned, detected, "detection's texts");
  assert.deepEqual(setColumns(SQLITE_INGEST, "update_call_text").sort(), rescanned, "SQLite");
  assert.deepEqual(
    setColumns(POSTGRES_INGEST, "update_call_texts").sort(),
    rescanned,
    "PostgreSQL",
  );
  for (
    const [engine, sql] of [["SQLite", SQLITE_INGEST], ["PostgreSQL", POSTGRES_INGEST]] as const
  ) {
    const read = namedSql(sql, "calls_to_rescan").replace(/\bt\./g, "");
    for (const name of rescanned) assert.match(read, new RegExp(`\\b${name}\\b`), engine);
  }
});

Deno.test("the merged columns are those both engines set on a stored call from its log or span", () => {
  const merged = columnsWith("merged");
  const sqlite = [
    ...setColumns(SQLITE_INGEST, "annotate_trace"),
    ...setColumns(SQLITE_INGEST, "annotate_decision"),
  ];
  const postgres = [
    ...setColumns(POSTGRES_INGEST, "annotate_traces"),
    ...setColumns(POSTGRES_INGEST, "annotate_decisions"),
  ];
  assert.deepEqual(sqlite.sort(), merged, "SQLite");
  assert.deepEqual(postgres.sort(), merged, "PostgreSQL");
});
