/**
 * `migrate-to-postgres` end to end: a demo-like data directory answers every
 * endpoint the same on the embedded store before and on PostgreSQL after.
 */
import assert from "node:assert/strict";
import { generateExports } from "../src/demo/mod.ts";
import { INSIGHT_NAMES } from "../src/analytics/mod.ts";
import { runCliProcess, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";

const DAY = 86_400_000;

/** Every endpoint, with filters, facets, details and each insight whose window holds all data. */
async function endpointPaths(server: TestServer, org: TestOrg): Promise<string[]> {
  const { body: sessions } = await server.getJson("/v1/sessions?limit=5", org.apiKey);
  const { body: calls } = await server.getJson("/v1/tool-calls?limit=5", org.apiKey);
  const since = new Date(Date.now() - 10 * DAY).toISOString();
  const paths = [
    "/v1/ping",
    "/v1/sessions?limit=200",
    `/v1/sessions?after=${since}&limit=200`,
    "/v1/sessions?agent=codex&limit=200",
    "/v1/sessions?domain=registry.npmjs.org",
    "/v1/sessions/facets",
    "/v1/tool-calls?limit=200",
    "/v1/tool-calls?tool_name=Bash&outcome=error&limit=200",
    "/v1/tool-calls?outcome=rejected",
    "/v1/tool-calls/facets",
    `/v1/tool-calls?limit=50&cursor=${calls.next_cursor}`,
    ...sessions.data.map((s: { session_id: string }) => `/v1/sessions/${s.session_id}`),
    ...calls.data.map((c: { id: string }) => `/v1/tool-calls/${c.id}`),
  ];
  // The generated data spans 20 days: the 30d and 90d windows hold all of it while time passes.
  for (const name of INSIGHT_NAMES) {
    paths.push(
      `/v1/insights/${name}?window=30d`,
      `/v1/insights/${name}?window=90d&granularity=weekly`,
    );
  }
  return paths;
}

async function answers(server: TestServer, org: TestOrg, paths: string[]) {
  const out: unknown[] = [];
  for (const path of paths) {
    const { status, body } = await server.getJson(path, org.apiKey);
    assert.equal(status, 200, `${path}: ${JSON.stringify(body)}`);
    if (path.startsWith("/v1/insights/")) delete body.window; // its start and end are "now"
    out.push({ path, body: roundFloats(body) });
  }
  return out;
}

/**
 * Sums of costs to 12 significant digits: DuckDB adds doubles in the order
 * its rows happen to lie, which differs between two replicas of the same rows.
 */
function roundFloats(value: unknown): unknown {
  if (typeof value === "number" && !Number.isInteger(value)) return Number(value.toPrecision(12));
  if (Array.isArray(value)) return value.map(roundFloats);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, roundFloats(v)]));
  }
  return value;
}

Deno.test({
  name: "a migrated data directory answers every endpoint the same on PostgreSQL",
  ignore: !pgTestUrl(),
  fn: async () => {
    const dir = await Deno.makeTempDir();
    await using database = await createTestDatabase();
    try {
      let org: TestOrg;
      let paths: string[];
      let before: unknown[];
      {
        await using embedded = await startTestServer({ dir });
        org = await embedded.createOrg("Demo");
        const now = new Date();
        for (const batch of generateExports({ actors: 1, days: 20, seed: 42, now })) {
          const response = await embedded.ingest("/v1/logs", batch.body, org.ingestKey);
          assert.equal(response.status, 200);
          await response.body?.cancel();
        }
        paths = await endpointPaths(embedded, org);
        before = await answers(embedded, org, paths);
      }
      const migrated = await runCliProcess([
        "migrate-to-postgres",
        "--data",
        dir,
        "--database",
        database.url,
        "--json",
      ]);
      assert.equal(migrated.code, 0, migrated.stderr);
      assert.ok(JSON.parse(migrated.stdout).total > 1000, migrated.stdout);

      const nodeDir = await Deno.makeTempDir();
      try {
        await using node = await startTestServer({ dir: nodeDir, database: database.url });
        const after = await answers(node, org, paths);
        for (let i = 0; i < paths.length; i++) {
          assert.deepEqual(after[i], before[i], String(paths[i]));
        }
      } finally {
        await Deno.remove(nodeDir, { recursive: true });
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
