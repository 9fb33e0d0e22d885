/**
 * Page cursors are bound to the organization and filters they were served
 * for by an HMAC under the installation's secret (issue #14, finding 6).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { cursorBinding } from "../src/api/cursor.ts";
import { ApiError } from "../src/http/responses.ts";
import {
  engineTest,
  startTestServer,
  testEngine,
  type TestOrg,
  type TestServer,
} from "./_harness.ts";
import { toolResult } from "./_otlp.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";
import { send, T0 } from "./_scenario.ts";

const LISTS = ["/v1/sessions?limit=2", "/v1/tool-calls?limit=2"] as const;

/** Five sessions of one call each; `offset` interleaves two organizations' times. */
async function loadCalls(server: TestServer, org: TestOrg, offset: number): Promise<void> {
  await send(
    server,
    org.ingestKey,
    Array.from({ length: 5 }, (_, i) =>
      toolResult({
        session: `s${i}`,
        id: `c${i}`,
        tool: "Read",
        timeMs: T0 + i * 1000 + offset,
      })),
  );
}

async function nextCursor(server: TestServer, path: string, key: string): Promise<string> {
  const { status, body } = await server.getJson(path, key);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(typeof body.next_cursor, "string", `${path} has a next page`);
  return body.next_cursor;
}

async function assertRefused(server: TestServer, path: string, key: string, why: string) {
  const { status, body } = await server.getJson(path, key);
  assert.equal(status, 400, `${why}: ${path} answered ${status} ${JSON.stringify(body)}`);
  assert.equal(body.error.code, "invalid_request");
  assert.match(body.error.message, /^invalid cursor/);
}

engineTest(
  "a cursor served to one organization is refused for another with the same filters",
  async () => {
    await using server = await startTestServer();
    const a = await server.createOrg("Alpha");
    const b = await server.createOrg("Beta");
    await loadCalls(server, a, 0);
    await loadCalls(server, b, 500);
    for (const list of LISTS) {
      const ofA = await nextCursor(server, list, a.apiKey);
      await assertRefused(server, `${list}&cursor=${ofA}`, b.apiKey, "org A's cursor on org B");
      const ofB = await nextCursor(server, list, b.apiKey);
      const own = await server.getJson(`${list}&cursor=${ofB}`, b.apiKey);
      assert.equal(own.status, 200, "org B's own cursor still works");
      assert.equal(own.body.data.length, 2);
    }
  },
);

engineTest("a cursor with any one character changed is refused", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg("Alpha");
  await loadCalls(server, org, 0);
  const cursor = await nextCursor(server, "/v1/tool-calls?limit=1", org.apiKey);
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  for (let i = 0; i < cursor.length; i++) {
    if (cursor[i] === ".") continue;
    // The neighbour in the alphabet: also changes only the low bits of the last base64 character.
    const other = alphabet[(alphabet.indexOf(cursor[i]!) + 1) % alphabet.length]!;
    const tampered = cursor.slice(0, i) + other + cursor.slice(i + 1);
    await assertRefused(
      server,
      `/v1/tool-calls?limit=1&cursor=${tampered}`,
      org.apiKey,
      `character ${i} changed`,
    );
  }
});

engineTest("a cursor forged for a chosen position is refused", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg("Alpha");
  await loadCalls(server, org, 0);
  // The unkeyed format cursors had before they were authenticated: anyone could make one.
  const filters = Object.entries({
    after: undefined,
    before: undefined,
    sessionId: undefined,
    actor: undefined,
    team: undefined,
    toolName: undefined,
    toolType: undefined,
    category: undefined,
    outcome: undefined,
  }).sort();
  const fingerprint = createHash("sha256").update(JSON.stringify(["tool-calls", filters]))
    .digest("base64url").slice(0, 16);
  const forged = btoa(JSON.stringify({ f: fingerprint, k: [T0 + 3000, "zzz"] }))
    .replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
  await assertRefused(server, `/v1/tool-calls?cursor=${forged}`, org.apiKey, "forged cursor");
  await assertRefused(server, `/v1/tool-calls?cursor=${forged}.`, org.apiKey, "empty tag");
});

engineTest("a cursor keeps working after the server restarts on the same data", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-test-" });
  await using database = testEngine() === "postgres" ? await createTestDatabase() : null;
  const options = { dir, ...(database ? { database: database.url } : {}) };
  try {
    let cursor: string;
    let org: TestOrg;
    {
      await using first = await startTestServer(options);
      org = await first.createOrg("Alpha");
      await loadCalls(first, org, 0);
      cursor = await nextCursor(first, "/v1/sessions?limit=2", org.apiKey);
    }
    await using second = await startTestServer(options);
    const { status, body } = await second.getJson(
      `/v1/sessions?limit=2&cursor=${cursor}`,
      org.apiKey,
    );
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(body.data.map((s: { session_id: string }) => s.session_id), ["s2", "s1"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "a cursor served by one PostgreSQL node is accepted by another node of the same database",
  ignore: pgTestUrl() === null,
  async fn() {
    await using database = await createTestDatabase();
    await using nodeA = await startTestServer({ database: database.url });
    await using nodeB = await startTestServer({ database: database.url });
    const org = await nodeA.createOrg("Alpha");
    await loadCalls(nodeA, org, 0);
    for (const list of LISTS) {
      const cursor = await nextCursor(nodeA, list, org.apiKey);
      const { status, body } = await nodeB.getJson(`${list}&cursor=${cursor}`, org.apiKey);
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.data.length, 2);
    }
  },
});

Deno.test("a cursor of another installation's secret is refused", () => {
  const filters = { actor: "a" };
  const ours = cursorBinding(crypto.getRandomValues(new Uint8Array(32)), "org_1", "x", filters);
  const theirs = cursorBinding(crypto.getRandomValues(new Uint8Array(32)), "org_1", "x", filters);
  const cursor = theirs.encode([T0, "s1"]);
  assert.deepEqual(theirs.decode(cursor), [T0, "s1"]);
  assert.throws(() => ours.decode(cursor), (error) => error instanceof ApiError);
});
