/**
 * One list of the replica's columns (`REPLICA_COLUMNS`, src/analytics/replica.ts):
 * the DuckDB schema declares exactly those columns in that order, `NOT NULL`
 * exactly where the kind admits no null and of the type the kind appends;
 * both sources' range reads select the same names in the same order (SQLite's
 * tool calls, model calls and metric points end with their rowid, which the
 * appender stops before). A column added to one place and not the others
 * fails here instead of in a catch-up.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { DuckDBInstance } from "@duckdb/node-api";
import { REPLICA_COLUMNS } from "../src/analytics/replica.ts";
import { namedSql, parseNamedSql } from "../src/store/named_sql.ts";
import { migrate } from "../src/store/sqlite/database.ts";
import { telemetryMigrations } from "../src/store/sqlite/migrations.ts";
import { migratePostgres } from "../src/store/postgres/migrate.ts";
import { connectPostgres, numberPlaceholders } from "../src/store/postgres/client.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";
import duckdbSchema from "../sql/duckdb/replica_schema.sql" with { type: "text" };
import sqliteSource from "../sql/sqlite/replica_source.sql" with { type: "text" };
import postgresSource from "../sql/postgres/replica_source.sql" with { type: "text" };

const TABLES = Object.keys(REPLICA_COLUMNS) as (keyof typeof REPLICA_COLUMNS)[];
const DUCKDB_TYPES: Record<string, string> = {
  text: "VARCHAR",
  int: "BIGINT",
  int64: "BIGINT",
  real: "DOUBLE",
};

function names(table: keyof typeof REPLICA_COLUMNS): string[] {
  return Object.keys(REPLICA_COLUMNS[table]);
}

Deno.test("the DuckDB schema declares the replica's columns: names, order, types and NOT NULL", async () => {
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    await connection.run(namedSql(parseNamedSql(duckdbSchema), "create_tables"));
    for (const table of TABLES) {
      const reader = await connection.runAndReadAll(`DESCRIBE ${table}`);
      const declared = reader.getRowObjectsJS().map((row) =>
        `${row.column_name} ${row.column_type}${row.null === "NO" ? " NOT NULL" : ""}`
      );
      const listed = Object.entries(REPLICA_COLUMNS[table]).map(([name, kind]) => {
        const base = kind.replace("?", "");
        return `${name} ${DUCKDB_TYPES[base]}${kind.endsWith("?") ? "" : " NOT NULL"}`;
      });
      assert.deepEqual(declared, listed, table);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
});

Deno.test("SQLite's range reads select the replica's columns in order", () => {
  const db = new DatabaseSync(":memory:");
  try {
    migrate(db, telemetryMigrations);
    const sql = parseNamedSql(sqliteSource);
    for (const table of TABLES) {
      const selected = db.prepare(namedSql(sql, `${table}_range`)).columns().map((c) => c.name);
      const rowid = selected.at(-1) === "rowid" ? selected.slice(0, -1) : selected;
      assert.deepEqual(rowid, names(table), table);
    }
  } finally {
    db.close();
  }
});

Deno.test({
  name: "PostgreSQL's range reads select the replica's columns in order",
  ignore: !pgTestUrl(),
  fn: async () => {
    await using database = await createTestDatabase();
    const sql = connectPostgres(database.url, { max: 1 });
    try {
      await migratePostgres(sql);
      const statements = parseNamedSql(postgresSource);
      for (const table of TABLES) {
        const text = numberPlaceholders(namedSql(statements, `${table}_range`));
        const described = await sql.unsafe(text).describe();
        assert.deepEqual(described.columns.map((c) => c.name), names(table), table);
      }
    } finally {
      await sql.end();
    }
  },
});
