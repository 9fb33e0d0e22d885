/**
 * `migrate-to-postgres` carries removals and re-additions of the key store
 * (issue #15 item 5): a member removed in the data directory since the last
 * run is removed in PostgreSQL and gets no keys there, one added again with
 * the same email is copied, revoked and new actors follow; a member added in
 * PostgreSQL itself is never removed.
 */
import assert from "node:assert/strict";
import { openKeyStoreFor } from "../src/store/open_stores.ts";
import { connectPostgres } from "../src/store/postgres/client.ts";
import type { CopyResult } from "../src/store/postgres/copy_from_sqlite.ts";
import type { Awaitable, KeyStoreApi } from "../src/store/stores.ts";
import { runCliProcess, startTestServer } from "./_harness.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";

const ignore = !pgTestUrl();

/** Runs the command as a user would; expects success and one JSON object on stdout. */
async function migrateJson(dir: string, url: string): Promise<CopyResult> {
  const result = await runCliProcess([
    "migrate-to-postgres",
    "--data",
    dir,
    "--database",
    url,
    "--json",
  ]);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.trim().split("\n");
  assert.equal(lines.length, 1, `one JSON object on stdout, got: ${result.stdout}`);
  return JSON.parse(lines[0]!);
}

async function withStore<T>(
  dir: string,
  url: string | null,
  fn: (store: KeyStoreApi) => Awaitable<T>,
): Promise<T> {
  const store = await openKeyStoreFor(dir, url);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

Deno.test({
  name:
    "a member removed since the last run is removed in PostgreSQL, one added again is copied, actors follow",
  ignore,
  fn: async () => {
    await using server = await startTestServer();
    await using db = await createTestDatabase();
    const dir = server.dir;
    const org = await server.createOrg("Acme");
    const { bob, laptop } = await withStore(dir, null, async (store) => ({
      bob: await store.addMember(org.orgId, "bob@acme.test"),
      laptop: await store.createActor(org.orgId, "alice-laptop"),
    }));
    await migrateJson(dir, db.url);
    const carol = await withStore(
      dir,
      db.url,
      (store) => store.addMember(org.orgId, "carol@acme.test"),
    );

    // Since the first run: the admin removed and added again (a new id, the
    // same email), the laptop revoked, a desktop added.
    const { admin, desktop } = await withStore(dir, null, async (store) => {
      await store.removeMember(org.orgId, org.memberId);
      await store.revokeActor(laptop.actor_id);
      return {
        admin: await store.addMember(org.orgId, "admin@acme.test"),
        desktop: await store.createActor(org.orgId, "alice-desktop"),
      };
    });
    const second = await migrateJson(dir, db.url);
    assert.equal(second.removed_members, 1);

    const [source, target] = await Promise.all([
      withStore(dir, null, async (store) => ({
        members: await store.listMembers(org.orgId),
        actors: await store.listActors(org.orgId),
      })),
      withStore(dir, db.url, async (store) => ({
        members: await store.listMembers(org.orgId),
        actors: await store.listActors(org.orgId),
      })),
    ]);
    assert.deepEqual(
      target.members.members.map((m) => [m.id, m.email]),
      [[bob.id, "bob@acme.test"], [carol.id, "carol@acme.test"], [admin.id, "admin@acme.test"]],
      "the removed member is gone, the one added again is there, PostgreSQL's own member stays",
    );
    assert.deepEqual(
      target.members.members.filter((m) => m.id !== carol.id),
      source.members.members,
    );
    assert.deepEqual(target.actors, source.actors, "revocations and new actors copied");

    await withStore(dir, db.url, async (store) => {
      await assert.rejects(
        Promise.resolve().then(() => store.createKey(org.orgId, org.memberId)),
        /Member not found/,
        "the removed member gets no keys in PostgreSQL",
      );
      assert.match((await store.createKey(org.orgId, admin.id)).key, /^wb_api_/);
      assert.equal(await store.verifyApiKey(org.apiKey), null, "its old key is revoked");
      assert.equal(await store.verifyIngestKey(laptop.ingest_key), null);
      assert.equal((await store.verifyIngestKey(desktop.ingest_key))?.actorId, desktop.actor_id);
    });

    const idle = await migrateJson(dir, db.url);
    assert.equal(
      idle.removed_members + idle.total + idle.deleted,
      0,
      "nothing new: nothing written",
    );
  },
});

Deno.test({
  name: "a database copied before removals were tracked still drops a member removed since",
  ignore,
  fn: async () => {
    await using server = await startTestServer();
    await using db = await createTestDatabase();
    const org = await server.createOrg("Acme");
    await migrateJson(server.dir, db.url);
    // What an earlier version left: the same copy without the list of copied members.
    const sql = connectPostgres(db.url, { max: 1 });
    try {
      await sql.unsafe("DROP TABLE migration_members");
    } finally {
      await sql.end();
    }
    await withStore(server.dir, null, (store) => store.removeMember(org.orgId, org.memberId));
    const second = await migrateJson(server.dir, db.url);
    assert.equal(second.removed_members, 1);
    const members = await withStore(server.dir, db.url, (store) => store.listMembers(org.orgId));
    assert.deepEqual(members.members, []);
  },
});
