import assert from "node:assert/strict";
import { KeyStore, KeyStoreInputError } from "../src/store/sqlite/keys.ts";
import { UserInputError } from "../src/errors.ts";
import { connectPostgres } from "../src/store/postgres/client.ts";
import { PgKeyStore } from "../src/store/postgres/keys.ts";
import {
  migratePostgres,
  postgresMigrations,
  requirePostgresMigrated,
} from "../src/store/postgres/migrate.ts";
import type { Awaitable, KeyStoreApi } from "../src/store/stores.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";

const ignore = !pgTestUrl();

/** Records each step's result, or its refusal as `{ error, message }`. */
function recorder() {
  const results: unknown[] = [];
  const run = async <T>(step: () => Awaitable<T>): Promise<T | undefined> => {
    try {
      const value = await step();
      results.push(value);
      return value;
    } catch (error) {
      const { name, message } = error as Error;
      results.push({ error: name, message });
      return undefined;
    } finally {
      // Keys created in one millisecond list in id order, which is random: keep them apart.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  return { results, run };
}

/** Every admin command, with refusals, on a fresh store; returns the results in order. */
async function adminScript(store: KeyStoreApi): Promise<unknown[]> {
  const { results, run } = recorder();
  const acme = (await run(() => store.createOrg("Acme")))!;
  const beta = (await run(() => store.createOrg("Beta")))!;
  const alice = (await run(() => store.addMember(acme.id, "alice@acme.test")))!;
  const bob = (await run(() => store.addMember(acme.id, "bob@acme.test")))!;
  await run(() => store.addMember(acme.id, "alice@acme.test"));
  await run(() => store.addMember(beta.id, "alice@acme.test"));
  await run(() => store.addMember("org_missing", "carol@acme.test"));
  const laptop = (await run(() => store.createKey(acme.id, alice.id, "laptop")))!;
  const unnamed = (await run(() => store.createKey(acme.id, alice.id)))!;
  const ci = (await run(() => store.createKey(acme.id, bob.id, "ci")))!;
  await run(() => store.createKey(acme.id, "mem_missing"));
  await run(() => store.createKey(beta.id, alice.id, "wrong org"));
  await run(() => store.createKey("org_missing", alice.id));
  await run(() => store.listKeys(acme.id));
  await run(() => store.listKeys(beta.id));
  await run(() => store.revokeKey(laptop.id));
  await run(() => store.revokeKey(laptop.id));
  await run(() => store.revokeKey("key_missing"));
  await run(() => store.verifyApiKey(laptop.key));
  await run(() => store.verifyApiKey(unnamed.key));
  await run(() => store.removeMember(acme.id, alice.id));
  await run(() => store.removeMember(acme.id, alice.id));
  await run(() => store.removeMember(beta.id, bob.id));
  await run(() => store.removeMember("org_missing", bob.id));
  await run(() => store.createKey(acme.id, alice.id));
  await run(() => store.verifyApiKey(unnamed.key));
  await run(() => store.verifyApiKey(ci.key));
  await run(() => store.listKeys(acme.id));
  await run(() => store.listKeys("org_missing"));
  const actor = (await run(() => store.createActor(acme.id, "laptop")))!;
  await run(() => store.createActor(beta.id));
  await run(() => store.createActor("org_missing"));
  await run(() => store.verifyIngestKey(actor.ingest_key));
  await run(() => store.verifyApiKey(actor.ingest_key));
  await run(() => store.verifyIngestKey(ci.key));
  await run(() => store.verifyApiKey("wb_api_not_a_key"));
  return results;
}

/** Admin writes on a read-only store over the data {@link adminScript} left. */
async function readOnlyScript(store: KeyStoreApi, orgId: string): Promise<unknown[]> {
  const { results, run } = recorder();
  const listed = (await run(() => store.listKeys(orgId)))!;
  const [revoked, active] = [listed.keys[0]!, listed.keys[2]!];
  await run(() => store.createOrg("Gamma"));
  await run(() => store.addMember(orgId, "dave@acme.test"));
  await run(() => store.addMember("org_missing", "dave@acme.test"));
  await run(() => store.createKey(orgId, active.member));
  await run(() => store.createKey(orgId, "mem_missing"));
  await run(() => store.revokeKey(revoked.id));
  await run(() => store.revokeKey(active.id));
  await run(() => store.revokeKey("key_missing"));
  await run(() => store.removeMember(orgId, active.member));
  await run(() => store.createActor(orgId));
  await run(() => store.listKeys(orgId));
  return results;
}

const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/g;
const GENERATED = /\b(org|mem|key|act|wb_api|wb_ingest)_[0-9A-Za-z_]+/g;

/** Results with generated ids and keys numbered by first appearance, and times blanked. */
function normalise(results: unknown[]): unknown {
  const names = new Map<string, string>();
  const text = JSON.stringify(results)
    .replace(TIMESTAMP, "<time>")
    .replace(GENERATED, (value, prefix: string) => {
      if (!names.has(value)) names.set(value, `<${prefix} ${names.size + 1}>`);
      return names.get(value)!;
    });
  return JSON.parse(text);
}

async function withSqliteStore<T>(fn: (path: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir();
  try {
    return await fn(`${dir}/keys.db`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: "PgKeyStore answers every admin command and key check as the SQLite key store does",
  ignore,
  async fn() {
    await using database = await createTestDatabase();
    await withSqliteStore(async (path) => {
      const sqlite = KeyStore.open(path);
      const pg = await PgKeyStore.open(database.url);
      try {
        const expected = normalise(await adminScript(sqlite));
        const actual = normalise(await adminScript(pg));
        assert.deepEqual(actual, expected);
        const refusals = (expected as ({ error?: string } | null)[]).filter((r) => r?.error);
        assert.equal(refusals.length, 12, "the script exercises every refusal");
        assert.ok(refusals.every((r) => r?.error === "KeyStoreInputError"));
      } finally {
        sqlite.close();
        await pg.close();
      }
    });
  },
});

Deno.test({
  name: "a read-only PgKeyStore refuses admin writes as the read-only SQLite key store does",
  ignore,
  async fn() {
    await using database = await createTestDatabase();
    await withSqliteStore(async (path) => {
      const sqliteWriter = KeyStore.open(path);
      const pgWriter = await PgKeyStore.open(database.url);
      let sqliteOrg: string, pgOrg: string;
      try {
        sqliteOrg = firstOrg(await adminScript(sqliteWriter));
        pgOrg = firstOrg(await adminScript(pgWriter));
      } finally {
        sqliteWriter.close();
        await pgWriter.close();
      }
      const sqlite = KeyStore.open(path, { readOnly: true });
      const pg = await PgKeyStore.open(database.url, { readOnly: true });
      try {
        const expected = normalise(await readOnlyScript(sqlite, sqliteOrg));
        const actual = normalise(await readOnlyScript(pg, pgOrg));
        assert.deepEqual(actual, expected);
        assert.ok(
          JSON.stringify(expected).includes("attempt to write a readonly database"),
          "the script reaches the read-only refusal",
        );
        await pg.probe();
      } finally {
        sqlite.close();
        await pg.close();
      }
    });
  },
});

/** The id of the organization an {@link adminScript} created first. */
function firstOrg(results: unknown[]): string {
  return (results[0] as { id: string }).id;
}

Deno.test({
  name: "a key revoked or a member removed through one node fails the next check on another node",
  ignore,
  async fn() {
    await using database = await createTestDatabase();
    const nodeA = await PgKeyStore.open(database.url);
    const nodeB = await PgKeyStore.open(database.url);
    try {
      const org = await nodeA.createOrg("Acme");
      const member = await nodeA.addMember(org.id, "alice@acme.test");
      const first = await nodeA.createKey(org.id, member.id, "first");
      const second = await nodeA.createKey(org.id, member.id, "second");
      const actor = await nodeA.createActor(org.id, "laptop");

      assert.deepEqual(await nodeB.verifyApiKey(first.key), { orgId: org.id, keyId: first.id });
      assert.deepEqual(await nodeB.verifyApiKey(second.key), { orgId: org.id, keyId: second.id });
      assert.deepEqual(await nodeB.verifyIngestKey(actor.ingest_key), {
        orgId: org.id,
        actorId: actor.actor_id,
      });

      await nodeA.revokeKey(first.id);
      assert.equal(await nodeB.verifyApiKey(first.key), null);
      assert.deepEqual(await nodeB.verifyApiKey(second.key), { orgId: org.id, keyId: second.id });

      assert.deepEqual(await nodeA.removeMember(org.id, member.id), {
        member: member.id,
        revoked_keys: 1,
      });
      assert.equal(await nodeB.verifyApiKey(second.key), null);
      await nodeB.probe();
    } finally {
      await nodeA.close();
      await nodeB.close();
    }
  },
});

Deno.test({
  name: "PgKeyStore refuses unknown organizations, members and keys with the key store's messages",
  ignore,
  async fn(t) {
    await using database = await createTestDatabase();
    const store = await PgKeyStore.open(database.url);
    try {
      const org = await store.createOrg("Acme");
      const other = await store.createOrg("Beta");
      const member = await store.addMember(other.id, "alice@beta.test");
      const cases: { name: string; call: () => Promise<unknown>; message: string }[] = [
        {
          name: "member add, unknown org",
          call: () => store.addMember("org_nope", "a@b.c"),
          message: 'Organization not found: "org_nope"',
        },
        {
          name: "member add, email taken",
          call: () => store.addMember(other.id, "alice@beta.test"),
          message: 'Member already exists: "alice@beta.test"',
        },
        {
          name: "member remove, member of another org",
          call: () => store.removeMember(org.id, member.id),
          message: `Member not found in organization: "${member.id}"`,
        },
        {
          name: "key create, unknown member",
          call: () => store.createKey(org.id, "mem_nope"),
          message: 'Member not found in organization: "mem_nope"',
        },
        {
          name: "key revoke, unknown key",
          call: () => store.revokeKey("key_nope"),
          message: 'Key not found: "key_nope"',
        },
        {
          name: "key list, unknown org",
          call: () => store.listKeys("org_nope"),
          message: 'Organization not found: "org_nope"',
        },
        {
          name: "actor create, unknown org",
          call: () => store.createActor("org_nope"),
          message: 'Organization not found: "org_nope"',
        },
      ];
      for (const c of cases) {
        await t.step(c.name, async () => {
          await assert.rejects(c.call, (error) => {
            assert.ok(error instanceof KeyStoreInputError);
            assert.equal(error.message, c.message);
            return true;
          });
        });
      }
    } finally {
      await store.close();
    }
  },
});

Deno.test({
  name: "two nodes migrating a fresh database at once both succeed and apply each migration once",
  ignore,
  async fn() {
    await using database = await createTestDatabase();
    const nodeA = connectPostgres(database.url, { max: 2 });
    const nodeB = connectPostgres(database.url, { max: 2 });
    try {
      await assert.rejects(requirePostgresMigrated(nodeA), UserInputError);
      const latest = postgresMigrations.at(-1)!.version;
      assert.deepEqual(
        await Promise.all([migratePostgres(nodeA), migratePostgres(nodeB)]),
        [latest, latest],
      );
      const applied = await nodeA.unsafe("SELECT version, name FROM schema_migrations");
      assert.deepEqual(
        applied.map((row) => ({ ...row })),
        postgresMigrations.map(({ version, name }) => ({ version, name })),
      );
      await requirePostgresMigrated(nodeB);
      assert.equal(await migratePostgres(nodeB), latest, "a migrated database is left as it is");
    } finally {
      await nodeA.end();
      await nodeB.end();
    }
  },
});

Deno.test({
  name: "a read-only PgKeyStore refuses to open a database that is not migrated",
  ignore,
  async fn() {
    await using database = await createTestDatabase();
    await assert.rejects(
      PgKeyStore.open(database.url, { readOnly: true }),
      (error) => {
        assert.ok(error instanceof UserInputError);
        assert.match(error.message, /^PostgreSQL database is not at the current schema: version 0/);
        return true;
      },
    );
  },
});
