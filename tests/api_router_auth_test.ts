import assert from "node:assert/strict";
import type { KeyVerifier } from "../src/store/stores.ts";
import { connectPostgres } from "../src/store/postgres/client.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";
import { engineTest, startTestServer } from "./_harness.ts";

engineTest("unknown paths are 404 text before auth, wrong methods 405 text", async (t) => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  // `/` redirects to the dashboard (tests/ui_assets_test.ts).
  for (const path of ["/v1", "/v1/", "/v1/nope", "/v1/sessions/a/b", "/v1/tool-calls/"]) {
    await t.step(`GET ${path} → 404`, async () => {
      const response = await server.get(path);
      assert.equal(response.status, 404);
      assert.match(response.headers.get("content-type") ?? "", /^text\/plain/);
      assert.equal(await response.text(), "404 page not found");
    });
  }
  for (const method of ["POST", "PUT", "DELETE", "PATCH", "HEAD"]) {
    await t.step(`${method} /v1/sessions → 405`, async () => {
      const response = await server.get("/v1/sessions", undefined, { method });
      assert.equal(response.status, 405);
      const body = await response.text();
      if (method !== "HEAD") assert.equal(body, "Method Not Allowed");
    });
  }
  await t.step("405 comes before auth, also with a valid key", async () => {
    const response = await server.get("/v1/ping", org.apiKey, { method: "POST" });
    assert.equal(response.status, 405);
    await response.body?.cancel();
  });
});

engineTest(
  "auth accepts exactly 'Bearer <key>' and refuses everything else with the fixed 401",
  async (t) => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const other = await server.createOrg("Other");
    await t.step("a valid key", async () => {
      const ping = await server.getJson("/v1/ping", org.apiKey);
      assert.equal(ping.status, 200);
    });
    const bad: Record<string, string | undefined> = {
      "missing header": undefined,
      "wrong scheme": `Basic ${org.apiKey}`,
      "lower-case scheme": `bearer ${org.apiKey}`,
      "two spaces": `Bearer  ${org.apiKey}`,
      "a second word": `Bearer ${org.apiKey} extra`,
      "no key": "Bearer ",
      "unknown key": "Bearer wb_api_0000000000000000000000000000000000000000000",
      "an ingest key": `Bearer ${org.ingestKey}`,
      "another org's ingest key": `Bearer ${other.ingestKey}`,
    };
    for (const [name, header] of Object.entries(bad)) {
      await t.step(name, async () => {
        const response = await server.get("/v1/sessions", undefined, {
          headers: header === undefined ? {} : { authorization: header },
        });
        assert.equal(response.status, 401);
        assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
        assert.deepEqual(await response.json(), {
          error: { code: "unauthenticated", message: "invalid or missing Bearer credential" },
        });
      });
    }
  },
);

engineTest("a key store that cannot be read answers 503 keystore_unavailable", async () => {
  const failing = (): KeyVerifier => ({
    verifyApiKey: () => {
      throw new Error("disk I/O error");
    },
    verifyIngestKey: () => {
      throw new Error("disk I/O error");
    },
  });
  await using server = await startTestServer({ overrides: { keys: failing } });
  const org = await server.createOrg();
  const response = await server.getJson("/v1/sessions", org.apiKey);
  assert.equal(response.status, 503);
  assert.equal(response.body.error.code, "keystore_unavailable");
  assert.equal(typeof response.body.error.message, "string");
  const health = await server.getJson("/healthz", "");
  assert.equal(health.status, 200, "/healthz needs no key store");
});

engineTest(
  "key lifecycle: new key works at once, revoked key and removed member's keys fail next request",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const store = await server.keyStore();
    try {
      const fresh = await store.createKey(org.orgId, org.memberId, "fresh");
      assert.equal((await server.getJson("/v1/ping", fresh.key)).status, 200);
      await store.revokeKey(fresh.id);
      assert.equal((await server.getJson("/v1/ping", fresh.key)).status, 401);
      assert.equal((await server.getJson("/v1/ping", org.apiKey)).status, 200);
      const result = await store.removeMember(org.orgId, org.memberId);
      assert.equal(result.revoked_keys, 1);
      assert.equal((await server.getJson("/v1/ping", org.apiKey)).status, 401);
    } finally {
      await store.close();
    }
  },
);

engineTest("over-long URLs and headers are refused before any work", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const long = await server.get(`/v1/sessions?agent=${"a".repeat(9000)}`, org.apiKey);
  assert.equal(long.status, 414);
  await long.body?.cancel();
  const headers = await server.get("/v1/ping", org.apiKey, {
    headers: { "x-big": "b".repeat(20000) },
  });
  assert.equal(headers.status, 431);
  await headers.body?.cancel();
});

engineTest(
  "queries past the queue limit are answered 503 overloaded with Retry-After",
  async () => {
    await using server = await startTestServer({
      flags: { readerThreads: "1", maxQueuedQueries: "1" },
    });
    const org = await server.createOrg();
    const responses = await Promise.all(
      Array.from(
        { length: 30 },
        () => server.get("/v1/sessions?after=2020-01-01T00:00:00Z", org.apiKey),
      ),
    );
    const statuses = responses.map((r) => r.status);
    const overloaded = responses.filter((r) => r.status === 503);
    assert.ok(overloaded.length > 0, `statuses: ${statuses}`);
    assert.ok(statuses.every((s) => s === 200 || s === 503), `statuses: ${statuses}`);
    assert.equal(overloaded[0]!.headers.get("retry-after"), "1");
    for (const response of responses) {
      if (response.status === 503) {
        assert.equal((await response.json()).error.code, "overloaded");
      } else await response.body?.cancel();
    }
  },
);

Deno.test({
  name: "a PostgreSQL key store out of reach answers 503 keystore_unavailable, then recovers",
  ignore: !pgTestUrl(),
  fn: async () => {
    await using db = await createTestDatabase();
    await using server = await startTestServer({ database: db.url });
    const org = await server.createOrg();
    assert.equal((await server.getJson("/v1/ping", org.apiKey)).status, 200);
    // The replica's first catch-up done, no query is in flight when the
    // connections are cut: postgres.js 3.4.9 throws an uncatchable TypeError
    // when a connection closes with a small write still queued (upstream
    // porsager/postgres#1154, #1208; no release fixes it yet).
    for (let tries = 0;; tries++) {
      const insight = await server.getJson("/v1/insights/activity", org.apiKey);
      if (insight.status === 200) break;
      assert.ok(insight.status === 503 && tries < 600, JSON.stringify(insight.body));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const name = new URL(server.database!).pathname.slice(1);
    const admin = connectPostgres(pgTestUrl()!, { max: 1 });
    try {
      await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.unsafe(
        "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = $1",
        [name],
      );
      const refused = await server.getJson("/v1/sessions", org.apiKey);
      assert.equal(refused.status, 503);
      assert.equal(refused.body.error.code, "keystore_unavailable");
      const ingest = await server.ingest("/v1/logs", { resourceLogs: [] }, org.ingestKey);
      assert.equal(ingest.status, 503);
      await ingest.body?.cancel();
      await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      assert.equal((await server.getJson("/v1/ping", org.apiKey)).status, 200);
    } finally {
      await admin.unsafe(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
  },
});
