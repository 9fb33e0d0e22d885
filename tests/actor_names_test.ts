/**
 * `actor_name` beside every `actor_id` (issue #15 item 1): sessions and tool
 * calls, lists and details, on both engines; names come from the key store
 * of the asking organization only, through a cache that is never stale for
 * longer than its lifetime.
 */
import assert from "node:assert/strict";
import { ACTOR_NAME_TTL_MS, ActorNames } from "../src/api/actor_names.ts";
import { KeyStore } from "../src/store/sqlite/keys.ts";
import { openDatabase } from "../src/store/sqlite/database.ts";
import { engineTest, startTestServer } from "./_harness.ts";
import { loadScenario } from "./_scenario.ts";

type Row = Record<string, string>;

engineTest(
  "sessions and tool calls carry each actor's name beside its id, in lists and details",
  async () => {
    await using server = await startTestServer();
    const { org, actorB } = await loadScenario(server);
    const expected: Record<string, string> = { [org.actorId]: "dev", [actorB.actorId]: "second" };
    const named = (row: Row) => [row.actor_id, row.actor_name];

    const sessions = await server.getJson("/v1/sessions", org.apiKey);
    assert.equal(sessions.status, 200);
    assert.deepEqual(sessions.body.data.map((s: Row) => [s.session_id, s.actor_name]), [
      ["s3", "dev"],
      ["s2", "second"],
      ["s1", "dev"],
    ]);
    const s2 = await server.getJson("/v1/sessions/s2", org.apiKey);
    assert.deepEqual(named(s2.body.session), [actorB.actorId, "second"]);

    const calls = await server.getJson("/v1/tool-calls", org.apiKey);
    assert.equal(calls.status, 200);
    for (const call of calls.body.data as Row[]) {
      assert.equal(call.actor_name, expected[call.actor_id!], `list: call ${call.id}`);
    }
    assert.deepEqual(
      new Set(calls.body.data.map((c: Row) => c.actor_name)),
      new Set(["dev", "second"]),
    );
    for (const call of calls.body.data as Row[]) {
      const detail = await server.getJson(`/v1/tool-calls/${call.id}`, org.apiKey);
      assert.deepEqual(named(detail.body), named(call), `detail: call ${call.id}`);
    }
  },
);

engineTest("an organization never finds another organization's actor names", async () => {
  await using server = await startTestServer();
  const a = await server.createOrg("A");
  const b = await server.createOrg("B");
  const store = await server.keyStore();
  try {
    assert.deepEqual(
      await store.actorNames(a.orgId, [a.actorId, b.actorId, "act_missing"]),
      new Map([[a.actorId, "dev"]]),
    );
    assert.deepEqual(await store.actorNames(b.orgId, [a.actorId]), new Map());
    const names = new ActorNames(store);
    assert.equal((await names.resolve(a.orgId, [a.actorId])).get(a.actorId), "dev");
    assert.equal(
      (await names.resolve(b.orgId, [a.actorId])).get(a.actorId),
      "",
      "a name cached for one organization is not served to another",
    );
  } finally {
    await store.close();
  }
});

Deno.test("a cached actor name is looked up again once older than the cache's lifetime", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-test-" });
  const store = KeyStore.open(`${dir}/keys.db`);
  const other = openDatabase(`${dir}/keys.db`);
  try {
    const org = store.createOrg("Acme");
    const actor = store.createActor(org.id, "alice-laptop");
    let now = 1_000_000;
    const names = new ActorNames(store, { now: () => now });
    const nameNow = async () => (await names.resolve(org.id, [actor.actor_id])).get(actor.actor_id);
    assert.equal(await nameNow(), "alice-laptop");
    // A rename by another process (no command renames yet; the column is what one would set).
    other.prepare("UPDATE actors SET name = 'alice-desktop' WHERE id = ?").run(actor.actor_id);
    now += ACTOR_NAME_TTL_MS - 1;
    assert.equal(await nameNow(), "alice-laptop", "served from the cache within its lifetime");
    now += 1;
    assert.equal(await nameNow(), "alice-desktop", "looked up again after it");
  } finally {
    other.close();
    store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
