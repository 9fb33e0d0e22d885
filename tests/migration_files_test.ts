/**
 * The migrations are found by file name in `sql/sqlite/` and `sql/postgres/`
 * (`src/store/migration.ts`): the series each engine applies are the ones it
 * applied when they were listed by hand (a recorded name or version that
 * moved would make a store migrate again or refuse to open), and a file that
 * would silently never run (misnamed, numbered twice, or leaving a gap) stops
 * the program at start-up instead.
 */
import assert from "node:assert/strict";
import {
  type Migration,
  migrationFiles,
  type MigrationSeries,
  readMigrations,
} from "../src/store/migration.ts";
import { keyStoreMigrations, telemetryMigrations } from "../src/store/sqlite/migrations.ts";
import { postgresMigrations } from "../src/store/postgres/migrate.ts";

const SQL = new URL("../sql/", import.meta.url);

/**
 * Asserts that `migrations` begin with the steps `expected` (version and name, as
 * `schema_migrations` and `user_version` record them): a later migration is a new file and
 * needs no line here.
 */
function assertBegins(migrations: readonly Migration[], expected: readonly string[]): void {
  const steps = migrations.slice(0, expected.length).map((m) => `${m.version} ${m.name}`);
  assert.deepEqual(steps, expected);
}

Deno.test("the migration series found in sql/ begin with the ones applied before, in order", () => {
  assertBegins(keyStoreMigrations, ["1 init", "2 installation secret"]);
  assertBegins(telemetryMigrations, [
    "1 init",
    "2 retention",
    "3 lean indexes",
    "4 range repair",
    "5 metric points",
    "7 session actors",
    "8 risk flags by time",
    "9 parent sessions",
    "10 unmapped events",
    "11 narrow call indexes",
    "12 estimated cost",
    "13 session dimensions",
    "14 session costs",
  ]);
  assertBegins(postgresMigrations, [
    "1 init",
    "2 installation secret",
    "3 range repair",
    "4 metric points",
    "5 session actors",
    "6 parent sessions",
    "7 unmapped events",
    "8 narrow call indexes",
    "9 estimated cost",
    "10 session dimensions",
  ]);
  assert.deepEqual(
    telemetryMigrations.filter((m) => m.rebuilds).map((m) => [m.version, m.rebuilds]),
    [
      [11, { table: "tool_calls", rowsPerSecond: 50_000 }],
      [15, { table: "tool_calls", rowsPerSecond: 15_000 }],
    ],
  );
  assert.equal(
    postgresMigrations[1]!.sql,
    Deno.readTextFileSync(new URL("postgres/0002_installation_secret.sql", SQL)),
  );
  assert.equal(
    telemetryMigrations[11]!.sql,
    Deno.readTextFileSync(new URL("sqlite/telemetry_0013_session_dimensions.sql", SQL)),
  );
});

const SQLITE: readonly MigrationSeries[] = [
  { prefix: "keys_" },
  { prefix: "telemetry_", extras: { 3: { withdrawn: "why" } } },
];

/** The version and name of each file found, per series. */
const found = (names: readonly string[], series = SQLITE) =>
  migrationFiles(names, series).map((files) => files.map((f) => `${f.version} ${f.name}`));

Deno.test("migration files are ordered by number, statement files beside them are not migrations", () => {
  assert.deepEqual(
    found([
      "ingest.sql",
      "telemetry_0004_b.sql",
      "keys.sql",
      "telemetry_0002_two_words.sql",
      "keys_0001_init.sql",
      "telemetry_0001_init.sql",
      "README.md",
    ]),
    [["1 init"], ["1 init", "2 two words", "4 b"]],
  );
  assert.deepEqual(found(["0002_b.sql", "queries.sql", "0001_a.sql"], [{ prefix: "" }]), [
    ["1 a", "2 b"],
  ]);
});

Deno.test("a misnamed, doubled or missing migration file fails loudly, naming it", () => {
  const base = ["keys_0001_init.sql", "telemetry_0001_init.sql", "telemetry_0002_b.sql"];
  const cases: [string, string[], RegExp][] = [
    ["three digits", ["telemetry_004_c.sql"], /not named .*: "telemetry_004_c\.sql"/],
    ["a dash", ["telemetry_0004-c.sql"], /not named .*: "telemetry_0004-c\.sql"/],
    ["a prefix with no number", ["telemetry_c.sql"], /not named .*: "telemetry_c\.sql"/],
    ["an upper-case name", ["telemetry_0004_C.sql"], /not named .*: "telemetry_0004_C\.sql"/],
    ["a series of no store", ["replica_0001_a.sql"], /not named .*: "replica_0001_a\.sql"/],
    ["a gap", ["telemetry_0005_e.sql"], /Missing migration file .*"telemetry_0004_<name>\.sql"/],
    [
      "a number twice",
      ["telemetry_0004_d.sql", "telemetry_0004_e.sql"],
      /Two migration files of one version: "telemetry_0004_d\.sql","telemetry_0004_e\.sql"/,
    ],
    [
      "a withdrawn number's file",
      ["telemetry_0003_c.sql"],
      /withdrawn has a file: "telemetry_0003/,
    ],
  ];
  for (const [what, extra, error] of cases) {
    assert.throws(() => migrationFiles([...base, ...extra], SQLITE), error, what);
  }
  assert.throws(
    () =>
      migrationFiles(["0001_a.sql"], [{
        prefix: "",
        extras: { 2: { rebuilds: { table: "t", rowsPerSecond: 1 } } },
      }]),
    /Missing migration file .*"0002_<name>\.sql"/,
    "extras of a version with no file",
  );
  assert.throws(
    () => migrationFiles(["0001_a.sql", "0003_c.sql"], [{ prefix: "" }]),
    /Missing migration file .*"0002_<name>\.sql"/,
  );
});

Deno.test("a folder holding a misnamed migration stops the program from reading it", () => {
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/0001_init.sql`, "CREATE TABLE a (b INTEGER);");
    Deno.writeTextFileSync(`${dir}/queries.sql`, "-- name: x\nSELECT 1;");
    const url = new URL(`file://${dir}/`);
    assert.deepEqual(readMigrations(url, [{ prefix: "" }]), [
      [{ version: 1, name: "init", sql: "CREATE TABLE a (b INTEGER);" }],
    ]);
    Deno.writeTextFileSync(`${dir}/2_more.sql`, "CREATE TABLE c (d INTEGER);");
    assert.throws(() => readMigrations(url, [{ prefix: "" }]), /not named .*: "2_more\.sql"/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
