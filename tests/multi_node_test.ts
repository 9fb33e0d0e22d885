/**
 * Several stateless nodes over one PostgreSQL (docs/design.md §8): two `serve`
 * processes, each with its own data directory (its DuckDB replica), share
 * the key store and the telemetry tables.
 */
import assert from "node:assert/strict";
import {
  createTestOrg,
  listenerUrl,
  runCliProcess,
  serveArgs,
  spawnCli,
  type TestOrg,
} from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";

interface Node extends AsyncDisposable {
  queryUrl: string;
  ingestUrl: string;
}

async function startNode(database: string): Promise<Node> {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-node-" });
  const { child, stdout } = await spawnCli(
    [...serveArgs(dir, "--database", database, "--log-level", "error")],
    /OTLP ingest listening on \S+/,
  );
  const stop = async () => {
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(dir, { recursive: true });
  };
  return {
    queryUrl: listenerUrl(stdout, "query API"),
    ingestUrl: listenerUrl(stdout, "OTLP ingest"),
    [Symbol.asyncDispose]: stop,
  };
}

async function getJson(url: string, key: string) {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
}

/** Calls are stamped an hour before the test started: inside every insight window, any day. */
const BASE = Date.now() - 3_600_000;

async function ingest(node: Node, org: TestOrg, first: number, count: number, session: string) {
  const records = Array.from({ length: count }, (_, i) =>
    toolResult({
      session,
      id: `call_${first + i}`,
      tool: i % 2 ? "Bash" : "Read",
      timeMs: BASE + first + i,
      input: { command: "ls" },
    }));
  const response = await fetch(`${node.ingestUrl}/v1/logs`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${org.ingestKey}` },
    body: JSON.stringify(claudeExport(records)),
  });
  assert.equal(response.status, 200, await response.text());
}

/** Every tool call of the organization, walking the cursor. */
async function allCalls(node: Node, org: TestOrg): Promise<string[]> {
  const ids: string[] = [];
  let cursor = "";
  for (;;) {
    const page = await getJson(
      `${node.queryUrl}/v1/tool-calls?limit=500${cursor ? `&cursor=${cursor}` : ""}`,
      org.apiKey,
    );
    assert.equal(page.status, 200);
    ids.push(...page.body.data.map((call: { id: string }) => call.id));
    if (!page.body.next_cursor) return ids;
    cursor = page.body.next_cursor;
  }
}

Deno.test({
  name: "two nodes over one PostgreSQL share data, keys and ingest",
  ignore: !pgTestUrl(),
  fn: async () => {
    await using database = await createTestDatabase();
    await using a = await startNode(database.url);
    await using b = await startNode(database.url);
    const dir = await Deno.makeTempDir();
    try {
      const org = await createTestOrg(dir, "Acme", database.url);

      // Ingested through A, answered by B: lists at once, insights after B's catch-up.
      await ingest(a, org, 0, 40, "s-a");
      const sessions = await getJson(`${b.queryUrl}/v1/sessions`, org.apiKey);
      assert.equal(sessions.status, 200);
      assert.deepEqual(sessions.body.data.map((s: { session_id: string }) => s.session_id), [
        "s-a",
      ]);
      assert.equal(sessions.body.data[0].tool_call_count, 40);
      const window = `window=90d`;
      const activityB = await getJson(`${b.queryUrl}/v1/insights/activity?${window}`, org.apiKey);
      assert.equal(activityB.status, 200);
      assert.equal(activityB.body.summary.total_calls, 40);

      // Both ingest at once, into the same session too: nothing lost, nothing doubled.
      await Promise.all([
        ingest(a, org, 1000, 300, "s-both"),
        ingest(b, org, 2000, 300, "s-both"),
        ingest(a, org, 3000, 200, "s-a2"),
        ingest(b, org, 3000, 200, "s-a2"), // the same calls again, through the other node
      ]);
      for (const node of [a, b]) {
        const ids = await allCalls(node, org);
        assert.equal(ids.length, 40 + 300 + 300 + 200);
        assert.equal(new Set(ids).size, ids.length);
        const both = await getJson(`${node.queryUrl}/v1/sessions/s-both`, org.apiKey);
        assert.equal(both.body.session.tool_call_count, 600);
        const activity = await getJson(
          `${node.queryUrl}/v1/insights/activity?${window}`,
          org.apiKey,
        );
        assert.equal(activity.body.summary.total_calls, 840);
      }

      // A key revoked through the CLI fails on both nodes on the next request.
      const revoked = await runCliProcess([
        "key",
        "revoke",
        "--database",
        database.url,
        "--id",
        org.keyId,
        "--json",
      ]);
      assert.equal(revoked.code, 0, revoked.stderr);
      for (const node of [a, b]) {
        const response = await fetch(`${node.queryUrl}/v1/ping`, {
          headers: { authorization: `Bearer ${org.apiKey}` },
        });
        assert.equal(response.status, 401);
        await response.body?.cancel();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
