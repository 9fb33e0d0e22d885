/**
 * `export` (issue #34): NDJSON, CSV and Parquet files of the same rows as
 * `GET /v1/export/*` for the same window, read back by DuckDB (CSV and
 * Parquet, typed as the line's schema says), written while the server runs,
 * on both engines; refusals say what is wrong and leave no file behind.
 */
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import type { z } from "zod";
import { exportColumns } from "../src/cli/export.ts";
import { ExportedSession, ExportedToolCall } from "../src/api/schemas.ts";
import { engineTest, runCliProcess, startTestServer, type TestServer } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { loadScenario, T0 } from "./_scenario.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const iso = (ms: number) => new Date(ms).toISOString();

/** The lines of an HTTP export. */
async function httpLines(server: TestServer, path: string, key: string): Promise<Json[]> {
  const response = await server.get(path, key);
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

/** `export` run on the test server's store; its parsed `--json` result. */
async function cliExport(server: TestServer, args: string[]): Promise<Json> {
  const run = await runCliProcess([
    "export",
    ...args,
    "--data",
    server.dir,
    ...(server.database === null ? [] : ["--database", server.database]),
    "--json",
  ]);
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout);
}

/** Rows of a query over a file, as plain values. */
async function duckdbRows(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(":memory:");
  try {
    const connection = await instance.connect();
    try {
      return (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

/**
 * A Parquet file's rows as the lines they came from: timestamps back to the
 * API's text, lists through JSON, integers as numbers, nulls left out.
 */
async function parquetLines(path: string, line: z.ZodObject): Promise<Json[]> {
  const columns = exportColumns(line);
  const select = columns.map(({ name, duckdbType }) => {
    const column = `"${name}"`;
    if (duckdbType === "TIMESTAMPTZ") {
      return `strftime(${column} AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') AS ${column}`;
    }
    // Lists and maps (a session's dimensions) read back through their JSON.
    return duckdbType.endsWith("[]") || duckdbType.startsWith("MAP(")
      ? `to_json(${column})::VARCHAR AS ${column}`
      : column;
  });
  const rows = await duckdbRows(`SELECT ${select.join(", ")} FROM read_parquet('${path}')`);
  return rows.map((row) =>
    Object.fromEntries(
      columns.flatMap(({ name, duckdbType }) => {
        const value = row[name];
        if (value === null || value === undefined) return [[name, null]];
        if (duckdbType.endsWith("[]") || duckdbType.startsWith("MAP(")) {
          return [[name, JSON.parse(String(value))]];
        }
        if (typeof value === "bigint") return [[name, Number(value)]];
        return [[name, value]];
      }),
    )
  );
}

/** A line with every column present: an absent optional field is null. */
function withNulls(line: Json, columns: { name: string }[]): Json {
  return Object.fromEntries(columns.map(({ name }) => [name, line[name] ?? null]));
}

/** A line as CSV shows it: text, lists as JSON, absent and empty as null. */
function asCsv(line: Json, columns: { name: string }[]): Json {
  return Object.fromEntries(columns.map(({ name }) => {
    const value = line[name];
    if (value === null || value === undefined || value === "") return [name, null];
    return [name, typeof value === "object" ? JSON.stringify(value) : String(value)];
  }));
}

engineTest(
  "export writes NDJSON, CSV and Parquet of the same rows as GET /v1/export/*, readable by DuckDB",
  async (t) => {
    await using server = await startTestServer();
    const { org } = await loadScenario(server);
    // Pages of 1,000 end inside a millisecond; a call with a comma, quotes and a newline in its error.
    const records = Array.from({ length: 1500 }, (_, i) =>
      toolResult({
        session: `bulk-${i % 4}`,
        id: `bulk_${i}`,
        tool: "Grep",
        timeMs: T0 + 40_000 + Math.floor(i / 3),
        success: i % 9 !== 0,
        error: i % 9 === 0 ? 'no match, "pattern"\nline 2' : undefined,
      }));
    // Their sessions' dimensions (docs/api.md §4.22) are a map column in Parquet.
    const body = claudeExport(records);
    body.resourceLogs[0]!.resource.attributes.push(
      { key: "team.id", value: { stringValue: "platform" } },
      { key: "cost_center", value: { stringValue: 'eng, "123"' } },
    );
    const response = await server.ingest("/v1/logs", body, org.ingestKey);
    assert.equal(response.status, 200, await response.text());
    const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-export-" });
    try {
      // Inclusive at both ends: the calls at T0 + 1 s and at T0 + 40.2 s are in.
      const window = { after: iso(T0 + 1000), before: iso(T0 + 40_200) };
      const query = `after=${window.after}&before=${window.before}`;
      const lines = await httpLines(server, `/v1/export/tool-calls?${query}`, org.apiKey);
      assert.equal(lines.length, 5 + 603);
      const args = (format: string, out: string) => [
        "--org",
        org.orgId,
        "--format",
        format,
        "--after",
        window.after,
        "--before",
        window.before,
        "--out",
        out,
      ];
      const columns = exportColumns(ExportedToolCall);
      await t.step("NDJSON: the lines of the HTTP export", async () => {
        const out = `${dir}/calls.ndjson`;
        const result = await cliExport(server, args("ndjson", out));
        assert.deepEqual(result, { rows: lines.length, format: "ndjson", what: "tool-calls", out });
        const text = await Deno.readTextFile(out);
        assert.deepEqual(text.split("\n").filter(Boolean).map((line) => JSON.parse(line)), lines);
      });
      await t.step("CSV: a header of the line's fields, one row per line", async () => {
        const out = `${dir}/calls.csv`;
        const result = await cliExport(server, args("csv", out));
        assert.equal(result.rows, lines.length);
        const header = (await Deno.readTextFile(out)).split("\r\n")[0];
        assert.equal(header, columns.map((c) => c.name).join(","));
        const rows = await duckdbRows(
          `SELECT * FROM read_csv('${out}', header = true, all_varchar = true)`,
        );
        assert.deepEqual(rows, lines.map((line) => asCsv(line, columns)));
      });
      await t.step("Parquet: typed columns, the same rows", async () => {
        const out = `${dir}/calls.parquet`;
        const result = await cliExport(server, args("parquet", out));
        assert.equal(result.rows, lines.length);
        const described = await duckdbRows(`DESCRIBE SELECT * FROM read_parquet('${out}')`);
        const types = Object.fromEntries(
          described.map((row) => [row.column_name, row.column_type]),
        );
        assert.equal(types.timestamp, "TIMESTAMP WITH TIME ZONE");
        assert.equal(types.duration_ms, "BIGINT");
        assert.equal(types.success, "BOOLEAN");
        assert.equal(types.risk_flags, "STRUCT(flag VARCHAR, evidence VARCHAR)[]");
        assert.equal(types.dimensions, "MAP(VARCHAR, VARCHAR)");
        assert.deepEqual(
          await parquetLines(out, ExportedToolCall),
          lines.map((line) => withNulls(line, columns)),
        );
        assert.deepEqual([...Deno.readDirSync(dir)].map((entry) => entry.name).sort(), [
          "calls.csv",
          "calls.ndjson",
          "calls.parquet",
        ], "no partial or temporary file is left");
      });
      await t.step("sessions: whole sessions by last_seen, as NDJSON and Parquet", async () => {
        const expected = await httpLines(server, `/v1/export/sessions?${query}`, org.apiKey);
        assert.ok(expected.length > 0);
        const ndjson = `${dir}/sessions.ndjson`;
        await cliExport(server, [...args("ndjson", ndjson), "--what", "sessions"]);
        const text = await Deno.readTextFile(ndjson);
        assert.deepEqual(
          text.split("\n").filter(Boolean).map((line) => JSON.parse(line)),
          expected,
        );
        const parquet = `${dir}/sessions.parquet`;
        await cliExport(server, [...args("parquet", parquet), "--what", "sessions"]);
        const sessionColumns = exportColumns(ExportedSession);
        assert.deepEqual(
          await parquetLines(parquet, ExportedSession),
          expected.map((line) => withNulls(line, sessionColumns)),
        );
      });
      await t.step("no window: every call of the organization", async () => {
        const out = `${dir}/all.ndjson`;
        const result = await cliExport(server, ["--org", org.orgId, "--out", out]);
        assert.equal(result.rows, 6 + 1500);
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

engineTest(
  "export refuses an unknown organization, format or time in one line, writing nothing",
  async (t) => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-export-" });
    try {
      const out = `${dir}/x.ndjson`;
      const cases: [string, string[], string, RegExp][] = [
        [
          "an unknown organization",
          ["--org", "org_nope"],
          "rejected",
          /Unknown organization: "org_nope"/,
        ],
        [
          "a bad format",
          ["--org", org.orgId, "--format", "xlsx"],
          "invalid_argument",
          /Invalid --format: "xlsx" \(expected ndjson, csv, parquet\)/,
        ],
        [
          "a bad time",
          ["--org", org.orgId, "--after", "yesterday"],
          "invalid_argument",
          /Invalid --after: "yesterday"/,
        ],
        [
          "a bad kind",
          ["--org", org.orgId, "--what", "models"],
          "invalid_argument",
          /Invalid --what/,
        ],
      ];
      for (const [name, args, code, message] of cases) {
        await t.step(name, async () => {
          const run = await runCliProcess([
            "export",
            ...args,
            "--out",
            out,
            "--data",
            server.dir,
            ...(server.database === null ? [] : ["--database", server.database]),
            "--json",
          ]);
          assert.equal(run.code, 2, run.stderr);
          assert.equal(run.stdout, "");
          const { error } = JSON.parse(run.stderr);
          assert.equal(error.code, code);
          assert.match(error.message, message);
          assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing written");
        });
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
