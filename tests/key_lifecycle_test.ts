/**
 * The ingest-key lifecycle an operator runs (issue #15 item 1): `org list`,
 * `member list`, `actor list` and `actor revoke` through the real CLI, on
 * both engines, and a revocation taking effect on a serving node (and, on
 * PostgreSQL, on a second node) at the next export.
 */
import assert from "node:assert/strict";
import { engineTest, runCliProcess, startTestServer, type TestServer } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The CLI over the server's store (its data directory, and its database on PostgreSQL). */
function cliOf(server: TestServer) {
  const store = ["--data", server.dir, ...(server.database ? ["--database", server.database] : [])];
  const run = (...args: string[]) => runCliProcess([...args, ...store]);
  return {
    run,
    async json(...args: string[]) {
      const result = await run(...args, "--json");
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.trim().split("\n");
      assert.equal(lines.length, 1, `one JSON object on stdout, got: ${result.stdout}`);
      return JSON.parse(lines[0]!);
    },
  };
}

/** One tool call export of `session`. */
function oneCall(session: string, id: string) {
  return claudeExport([toolResult({ session, id, tool: "Bash", timeMs: Date.now() })]);
}

engineTest("org list, member list and actor list show what the key store holds", async () => {
  await using server = await startTestServer();
  const acme = await server.createOrg("Acme");
  const store = await server.keyStore();
  let laptop: { actor_id: string };
  let other: { orgId: string };
  // Creation times are milliseconds: each row a millisecond later than the one before, so
  // "oldest first" has one answer (equal times fall back to the id order).
  const nextMillisecond = () => new Promise((resolve) => setTimeout(resolve, 2));
  try {
    await nextMillisecond();
    laptop = await store.createActor(acme.orgId, "alice-laptop");
    await nextMillisecond();
    other = { orgId: (await store.createOrg("Other")).id };
    await store.createActor(other.orgId, "bob-desktop");
  } finally {
    await store.close();
  }
  const cli = cliOf(server);
  const [orgs, members, actors, otherActors] = await Promise.all([
    cli.json("org", "list"),
    cli.json("member", "list", "--org", acme.orgId),
    cli.json("actor", "list", "--org", acme.orgId),
    cli.json("actor", "list", "--org", other.orgId),
  ]);
  assert.deepEqual(orgs.orgs.map((o: { id: string; name: string }) => [o.id, o.name]), [
    [acme.orgId, "Acme"],
    [other.orgId, "Other"],
  ]);
  assert.match(orgs.orgs[0].created_at, ISO);
  assert.match(members.members[0].created_at, ISO);
  assert.deepEqual(members, {
    members: [{
      id: acme.memberId,
      email: "admin@acme.test",
      created_at: members.members[0].created_at,
    }],
  });
  assert.deepEqual(
    actors.actors.map((a: Record<string, string>) => [a.id, a.name, "revoked_at" in a]),
    [[acme.actorId, "dev", false], [laptop.actor_id, "alice-laptop", false]],
    "every actor of the organization, oldest first, none revoked",
  );
  assert.deepEqual(
    otherActors.actors.map((a: { name: string }) => a.name),
    ["bob-desktop"],
    "only the organization's own actors",
  );
  assert.equal(JSON.stringify(actors).includes("wb_ingest_"), false, "never an ingest key");

  const text = await cli.run("actor", "list", "--org", acme.orgId);
  assert.equal(text.code, 0, text.stderr);
  const lines = text.stdout.trim().split("\n").map((line) => line.split("\t"));
  assert.deepEqual(lines[0], ["id", "name", "created_at", "revoked_at"]);
  assert.deepEqual(lines.slice(1).map((l) => [l[0], l[1], l[3]]), [
    [acme.actorId, "dev", "-"],
    [laptop.actor_id, "alice-laptop", "-"],
  ]);
});

engineTest("actor revoke records the time once and actor list shows it", async (t) => {
  await using server = await startTestServer();
  const org = await server.createOrg("Acme");
  const cli = cliOf(server);
  const revoked = await cli.json("actor", "revoke", "--id", org.actorId);
  assert.equal(revoked.id, org.actorId);
  assert.match(revoked.revoked_at, ISO);
  const again = await cli.json("actor", "revoke", "--id", org.actorId);
  assert.deepEqual(again, revoked, "revoking twice keeps the first time");
  const listed = await cli.json("actor", "list", "--org", org.orgId);
  assert.equal(listed.actors[0].revoked_at, revoked.revoked_at);

  for (
    const [name, args, message] of [
      ["unknown actor", ["actor", "revoke", "--id", "act_nope"], 'Actor not found: "act_nope"'],
      ["missing --id", ["actor", "revoke"], "--id"],
      ["unknown org", ["actor", "list", "--org", "org_nope"], 'Organization not found: "org_nope"'],
      ["member list, unknown org", ["member", "list", "--org", "org_nope"], "org_nope"],
    ] as const
  ) {
    await t.step(name, async () => {
      const result = await cli.run(...args);
      assert.equal(result.code, 2, result.stdout);
      assert.equal(result.stdout, "");
      assert.match(result.stderr, new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
    });
  }
});

engineTest(
  "an actor revoked while the server runs gets 401 on its next export while the other actor still ingests",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg("Acme");
    const store = await server.keyStore();
    let laptop: { actor_id: string; ingest_key: string };
    try {
      laptop = await store.createActor(org.orgId, "alice-laptop");
    } finally {
      await store.close();
    }
    const ingest = async (node: TestServer, key: string, id: string) => {
      const response = await node.ingest("/v1/logs", oneCall("s-revoke", id), key);
      await response.body?.cancel();
      return response.status;
    };
    assert.equal(await ingest(server, laptop.ingest_key, "c1"), 200);
    assert.equal(await ingest(server, org.ingestKey, "c2"), 200);

    await cliOf(server).json("actor", "revoke", "--id", laptop.actor_id);

    assert.equal(await ingest(server, laptop.ingest_key, "c3"), 401, "revoked: the next export");
    assert.equal(await ingest(server, org.ingestKey, "c4"), 200, "the other actor still ingests");
    if (server.database) {
      await using node2 = await startTestServer({ database: server.database });
      assert.equal(await ingest(node2, laptop.ingest_key, "c5"), 401, "on every node");
      assert.equal(await ingest(node2, org.ingestKey, "c6"), 200);
    }
    const calls = await server.getJson("/v1/tool-calls?session_id=s-revoke", org.apiKey);
    assert.equal(calls.status, 200, JSON.stringify(calls.body));
    assert.deepEqual(
      calls.body.data.map((c: { tool_name: string; actor_name: string }) => c.actor_name).sort(),
      server.database ? ["alice-laptop", "dev", "dev", "dev"] : ["alice-laptop", "dev", "dev"],
      "what the revoked actor sent before stays, under its name",
    );
  },
);
