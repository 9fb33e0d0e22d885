/**
 * One registry of insights (`INSIGHTS`, src/analytics/insights.ts): every
 * insight SQL file of the repository is the SQL of one of its entries, every
 * entry is served at its route (the spec's six and the extensions), and the
 * spec's names, each engine's SQL and SQLite's routing are read from it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { INSIGHT_NAMES, INSIGHTS, SQLITE_ROUTES } from "../src/analytics/mod.ts";
import { parseNamedSql } from "../src/store/named_sql.ts";
import { startTestServer } from "./_harness.ts";

const SQL_DIR = new URL("../sql/insights/", import.meta.url).pathname;

Deno.test("every insight SQL file is the SQL of one registry entry", () => {
  const used = Object.values(INSIGHTS).flatMap((definition) => [
    definition.sql,
    ...(definition.sqlite?.sql === undefined ? [] : [definition.sqlite.sql]),
  ]).map((sql) => JSON.stringify(Object.keys(sql).sort()) + Object.values(sql).join("\n"));
  for (const dir of [SQL_DIR, join(SQL_DIR, "sqlite")]) {
    for (const entry of Deno.readDirSync(dir)) {
      if (!entry.isFile || !entry.name.endsWith(".sql")) continue;
      const statements = parseNamedSql(Deno.readTextFileSync(join(dir, entry.name)));
      // Productivity's statements share a prelude the registry prepends to each.
      const found = used.some((text) =>
        Object.values(statements).every((statement) => text.includes(statement.trim()))
      );
      assert.ok(found, `${join(dir, entry.name)} is no registry entry's SQL`);
    }
  }
  assert.deepEqual(
    INSIGHT_NAMES,
    ["activity", "top-tools", "outliers", "cost", "risk", "domains"],
    "the spec's six, in the spec's order",
  );
  assert.deepEqual(SQLITE_ROUTES, { risk: ["7d", "30d"] });
});

Deno.test("every insight's SQL, on each engine, has a groups statement for group_by", () => {
  for (const definition of Object.values(INSIGHTS)) {
    for (const sql of [definition.sql, definition.sqlite?.sql ?? definition.sql]) {
      const groups = sql.groups ?? "";
      for (const marker of ["/*group_value*/", "/*group_join*/", "$group_limit"]) {
        assert.ok(groups.includes(marker), `${definition.name}: groups without ${marker}`);
      }
    }
  }
});

Deno.test("every registry entry is served at its route", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  for (const name of Object.keys(INSIGHTS)) {
    const { status, body } = await server.getJson(`/v1/insights/${name}?window=30d`, org.apiKey);
    assert.equal(status, 200, `${name}: ${JSON.stringify(body)}`);
    assert.equal(body.window.window, "30d", name);
  }
});
