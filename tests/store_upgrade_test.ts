/**
 * A data directory written by an earlier version (tests/fixtures/stores/)
 * migrates in place when today's server starts on it, and then serves what
 * that version served: every page of every list walk, every field it had, so the
 * narrower indexes (sql/sqlite/telemetry_0011_narrow_call_indexes.sql) keep
 * the order and the tie-break by id of calls that share a millisecond.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { startTestServer, testEngine } from "./_harness.ts";
import { fixtureClock } from "./_scenario.ts";
import { telemetryMigrations } from "../src/store/sqlite/migrations.ts";
import { migrate, type MigrationNotice, openDatabase } from "../src/store/sqlite/database.ts";

const FIXTURES = new URL("./fixtures/stores/", import.meta.url).pathname;

/** `actual` cut down to the object keys `expected` has, at every depth. */
function fieldsOf(actual: unknown, expected: unknown): unknown {
  if (Array.isArray(actual) && Array.isArray(expected)) {
    return actual.map((item, i) => fieldsOf(item, expected[i]));
  }
  if (
    actual !== null && expected !== null && typeof actual === "object" &&
    typeof expected === "object" && !Array.isArray(actual) && !Array.isArray(expected)
  ) {
    return Object.fromEntries(
      Object.keys(expected).filter((key) => key in actual).map((key) => [
        key,
        fieldsOf(
          (actual as Record<string, unknown>)[key],
          (expected as Record<string, unknown>)[key],
        ),
      ]),
    );
  }
  return actual;
}

interface Answers {
  apiKey: string;
  answers: Record<string, { status: number; body: unknown }>;
}

/** A store's permission decisions, in key order. */
const DECISIONS = `SELECT org_id, session_id, tool_call_id, decision, decision_source
  FROM decisions ORDER BY org_id, session_id, tool_call_id`;

/** The fixtures: the folder, the version that wrote it, and its schema. */
const WRITTEN = [
  { folder: "v10", version: "b60657c", schema: 10 },
  { folder: "v14", version: "b81d282", schema: 14 },
] as const;

for (const { folder, version, schema } of WRITTEN) {
  Deno.test({
    name:
      `a store written by version ${version} (schema ${schema}) serves the same answers after migration`,
    ignore: testEngine() !== "sqlite",
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "store-upgrade-" });
      try {
        for (const file of ["telemetry.db", "keys.db"]) {
          await Deno.copyFile(`${FIXTURES}${folder}/${file}`, `${dir}/${file}`);
        }
        const recorded: Answers = JSON.parse(
          await Deno.readTextFile(`${FIXTURES}${folder}/answers.json`),
        );
        const before = new DatabaseSync(`${dir}/telemetry.db`, { readOnly: true });
        const storedCalls = (before.prepare("SELECT count(*) AS n FROM tool_calls").get() as {
          n: number;
        }).n;
        const storedDecisions = before.prepare(DECISIONS).all();
        before.close();
        await using server = await startTestServer({ dir, overrides: { clock: fixtureClock() } });
        const paths = Object.keys(recorded.answers);
        assert.ok(paths.length > 50, "the fixture walks every list over several pages");
        for (const path of paths) {
          const answer = await server.getJson(path, recorded.apiKey);
          const expected = recorded.answers[path];
          // Fields added to the API since (additive extensions, e.g. a session's model_calls) are
          // not the old version's to judge; every field it served must be served unchanged.
          assert.deepEqual(fieldsOf(answer, expected), expected, path);
        }
        const db = new DatabaseSync(`${dir}/telemetry.db`, { readOnly: true });
        try {
          const { user_version } = db.prepare("PRAGMA user_version").get() as {
            user_version: number;
          };
          assert.equal(user_version, Math.max(...telemetryMigrations.map((m) => m.version)));
          // Schema 15 keyed the calls: every call moved, its indexes hold keys.
          const columns = db.prepare("SELECT name FROM pragma_index_info('calls_by_time')")
            .all().map((row) => row.name);
          assert.deepEqual(columns, ["org_key", "ts"]);
          const moved = db.prepare("SELECT count(*) AS n FROM calls").get() as { n: number };
          assert.ok(storedCalls > 100, "the fixture holds calls");
          assert.equal(moved.n, storedCalls);
          const hits = db.prepare(
            "SELECT count(*) AS n FROM domain_hits AS d JOIN calls AS c ON c.id = d.call_id",
          ).get() as { n: number };
          assert.equal(hits.n, 20, "the fixture's domain hits are kept, naming their calls");
          // Schema 19 keyed them by their call's, organization's and session's keys.
          const keyedHits = db.prepare(
            `SELECT count(*) AS n FROM keyed_domain_hits AS d JOIN calls AS c USING (call_key)
             WHERE d.org_key = c.org_key AND d.session_key = c.session_key`,
          ).get() as { n: number };
          assert.equal(keyedHits.n, 20);
          // Schema 17 keyed the decisions by their session's key; the view reads them as before.
          assert.equal(storedDecisions.length, 16, "the fixture holds decisions");
          assert.deepEqual(db.prepare(DECISIONS).all(), storedDecisions);
          const keyed = db.prepare("SELECT count(*) AS n FROM keyed_decisions").get() as {
            n: number;
          };
          assert.equal(keyed.n, storedDecisions.length);
          // Schema 14 filled each session's cost counts from its stored model calls.
          const counts = db.prepare(
            `SELECT s.reported_cost_calls AS kept, (SELECT count(cost_usd) FROM model_calls AS m
               WHERE m.org_id = s.org_id AND m.session_id = s.session_id) AS counted
             FROM sessions AS s`,
          ).all() as { kept: number; counted: number }[];
          assert.ok(counts.some((row) => row.counted > 0), "the fixture has reported costs");
          assert.deepEqual(counts.map((row) => row.kept), counts.map((row) => row.counted));
        } finally {
          db.close();
        }
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

Deno.test("the migration that rebuilds the call indexes says first how many rows and how long", async () => {
  const dir = await Deno.makeTempDir({ prefix: "store-upgrade-" });
  try {
    await Deno.copyFile(`${FIXTURES}v10/telemetry.db`, `${dir}/telemetry.db`);
    const db = openDatabase(`${dir}/telemetry.db`);
    const notices: MigrationNotice[] = [];
    try {
      migrate(db, telemetryMigrations, (notice) => notices.push(notice));
    } finally {
      db.close();
    }
    const latest = Math.max(...telemetryMigrations.map((m) => m.version));
    assert.deepEqual(notices, [
      { from: 10, to: latest, name: "narrow call indexes", rows: 160, estimatedSeconds: 1 },
      { from: 10, to: latest, name: "keyed calls", rows: 160, estimatedSeconds: 1 },
    ]);
    // A new file has no rows to rebuild: nothing to say.
    const fresh = openDatabase(`${dir}/fresh.db`);
    try {
      migrate(fresh, telemetryMigrations, (notice) => notices.push(notice));
    } finally {
      fresh.close();
    }
    assert.equal(notices.length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
