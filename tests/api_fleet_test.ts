/**
 * `GET /v1/fleet` (issue #33, an extension): per actor of the organization,
 * when it was last seen, its sessions of the last 7 days, each agent and
 * version it ran with its last time and what of its telemetry stored
 * nothing; `silent_days` keeps the actors that sent nothing for that long,
 * or never sent. The server's clock is fixed and the data sits at exact
 * distances from it (the boundaries of 7 days and of `silent_days` to the
 * millisecond); a second organization sends the same session ids, versions
 * and events of its own. Loaded through the real ingest path, on both engines.
 */
import assert from "node:assert/strict";
import { engineTest, startTestServer, type TestOrg, type TestServer } from "./_harness.ts";
import { claudeEvent } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The server's "now": the start of the current hour, fixed. */
const NOW = T0 + DAY;

const iso = (ms: number) => new Date(ms).toISOString();

// deno-lint-ignore no-explicit-any
type Json = any;

/** A Claude Code `tool_result` of an agent version. */
function call(session: string, id: string, timeMs: number, version: string) {
  return claudeEvent("tool_result", timeMs, {
    "session.id": session,
    "tool_name": "Bash",
    "tool_use_id": id,
    "success": "true",
    "duration_ms": "10",
    "app.version": version,
  });
}

/** Sends records as one export of `service` and expects a 200. */
async function send(
  server: TestServer,
  ingestKey: string,
  records: unknown[],
  service = "claude-code",
  scope = "com.anthropic.claude_code.events",
) {
  const response = await server.ingest("/v1/logs", {
    resourceLogs: [{
      resource: { attributes: [{ key: "service.name", value: { stringValue: service } }] },
      scopeLogs: [{ scope: { name: scope }, logRecords: records }],
    }],
  }, ingestKey);
  assert.equal(response.status, 200, await response.text());
}

async function fleet(server: TestServer, org: TestOrg, query = ""): Promise<Json[]> {
  const { status, body } = await server.getJson(`/v1/fleet${query}`, org.apiKey);
  assert.equal(status, 200, JSON.stringify(body));
  return body.data;
}

/** Actors of an organization, created through the key store. */
async function createActors(server: TestServer, org: TestOrg, names: string[]) {
  const keys = await server.keyStore();
  try {
    const actors: Record<string, { id: string; key: string }> = {};
    for (const name of names) {
      const actor = await keys.createActor(org.orgId, name);
      actors[name] = { id: actor.actor_id, key: actor.ingest_key };
    }
    return actors;
  } finally {
    await keys.close();
  }
}

/** Most recently seen first, ties by actor id; actors never seen last, by id. */
function assertFleetOrder(rows: Json[]) {
  const key = (row: Json) => [row.last_seen === null ? "" : row.last_seen, row.actor_id];
  for (let i = 1; i < rows.length; i++) {
    const [seenA, idA] = key(rows[i - 1]);
    const [seenB, idB] = key(rows[i]);
    assert.ok(
      seenA > seenB || (seenA === seenB && idA < idB),
      JSON.stringify([rows[i - 1], rows[i]]),
    );
  }
}

engineTest(
  "GET /v1/fleet answers per actor its last time, recent sessions, agents and versions, and unmapped events",
  async () => {
    await using server = await startTestServer({ overrides: { clock: () => NOW } });
    const a = await server.createOrg("A");
    const b = await server.createOrg("B");
    const actors = await createActors(server, a, ["silent", "quiet", "never", "revoked", "drift"]);
    const keys = await server.keyStore();
    await keys.revokeActor(actors.revoked!.id);
    await keys.close();
    const [theirs] = Object.values(await createActors(server, b, ["never"]));

    // The default actor ("dev"): two agents, three versions; a session of both agents.
    await send(server, a.ingestKey, [
      call("a1", "t1", NOW - HOUR, "2.1.240"),
      call("a2", "t2", NOW - 7 * DAY, "2.1.240"), // 7 days old to the millisecond: counted
      call("a3", "t3", NOW - 7 * DAY - 1, "2.1.240"), // a millisecond older: not
      call("a4", "t4", NOW - 10 * DAY, "2.0.0"),
      call("mix", "t5", NOW - 30 * MINUTE, "2.1.240"),
    ]);
    await send(server, a.ingestKey, [
      call("ci", "t6", NOW - 2 * HOUR, "3.0.0"),
      // Its row in a session claude-code opened has no version of its own.
      call("mix", "t7", NOW - 20 * MINUTE, "3.0.0"),
    ], "claude-code-ci");
    const before = Date.now();
    await send(server, a.ingestKey, [
      claudeEvent("hook_execution_start", NOW - 25 * MINUTE, { "session.id": "a1" }),
      claudeEvent("hook_execution_start", NOW - 24 * MINUTE, { "session.id": "a1" }),
      claudeEvent("mcp_server_connection", NOW - 23 * MINUTE, { "session.id": "a1" }),
    ]);
    // An actor whose agent nothing maps: it sent, though nothing was stored.
    const unknown = [1, 2].map((i) => claudeEvent("acme.step", NOW - i, { "session.id": "x" }));
    await send(server, actors.drift!.key, unknown, "acme-agent", "acme");
    const after = Date.now();
    // Silent for 3 days to the millisecond, and a millisecond short of it.
    await send(server, actors.silent!.key, [call("s1", "t8", NOW - 3 * DAY, "2.1.240")]);
    await send(server, actors.quiet!.key, [call("q1", "t9", NOW - 3 * DAY + 1, "2.1.240")]);

    // Organization B: the same session ids and events, another version.
    await send(server, b.ingestKey, [
      call("a1", "t1", NOW - HOUR, "9.9.9"),
      call("mix", "t5", NOW - 5 * MINUTE, "9.9.9"),
      call("b1", "t10", NOW - MINUTE, "9.9.9"),
    ]);
    await send(server, b.ingestKey, [
      claudeEvent("subagent_completed", NOW - MINUTE, { "session.id": "b1" }),
    ]);

    const rows = await fleet(server, a);
    assertFleetOrder(rows);
    const ids = rows.map((row) => row.actor_id);
    assert.deepEqual(ids.slice(2), [actors.quiet!.id, actors.silent!.id, actors.never!.id]);
    assert.deepEqual(new Set(ids.slice(0, 2)), new Set([a.actorId, actors.drift!.id]));
    const byId = new Map(rows.map((row) => [row.actor_id, row]));

    const dev = byId.get(a.actorId);
    // Its unmapped records arrived after its last tool call: they are its last time.
    const devSeen = Date.parse(dev.last_seen);
    assert.ok(devSeen >= before && devSeen <= after, dev.last_seen);
    const { last_seen: _, unmapped_events: devUnmapped, ...devRest } = dev;
    assert.deepEqual(devRest, {
      actor_id: a.actorId,
      actor_name: "dev",
      sessions_7d: 4, // a1, a2, ci and mix (once, though two agents ran in it)
      agents: [
        { agent: "claude-code-ci", agent_version: "", last_seen: iso(NOW - 20 * MINUTE) },
        { agent: "claude-code", agent_version: "2.1.240", last_seen: iso(NOW - 30 * MINUTE) },
        { agent: "claude-code-ci", agent_version: "3.0.0", last_seen: iso(NOW - 2 * HOUR) },
        { agent: "claude-code", agent_version: "2.0.0", last_seen: iso(NOW - 10 * DAY) },
      ],
    });
    assert.deepEqual(
      devUnmapped.map((row: Json) => [row.agent, row.event_name, row.reason, row.records]),
      [
        ["claude-code", "hook_execution_start", "unmapped_event", 2],
        ["claude-code", "mcp_server_connection", "unmapped_event", 1],
      ],
    );
    assert.equal(devUnmapped[0].last_seen, dev.last_seen);

    const drift = byId.get(actors.drift!.id);
    assert.equal(drift.actor_name, "drift");
    assert.deepEqual([drift.sessions_7d, drift.agents], [0, []]);
    assert.deepEqual(
      drift.unmapped_events.map((
        row: Json,
      ) => [row.agent, row.event_name, row.reason, row.records]),
      [["other", "acme.step", "unknown_agent", 2]],
    );
    assert.equal(drift.unmapped_events[0].last_seen, drift.last_seen);

    assert.deepEqual(byId.get(actors.silent!.id), {
      actor_id: actors.silent!.id,
      actor_name: "silent",
      last_seen: iso(NOW - 3 * DAY),
      sessions_7d: 1,
      agents: [{ agent: "claude-code", agent_version: "2.1.240", last_seen: iso(NOW - 3 * DAY) }],
      unmapped_events: [],
    });
    assert.equal(byId.get(actors.quiet!.id).last_seen, iso(NOW - 3 * DAY + 1));
    assert.deepEqual(byId.get(actors.never!.id), {
      actor_id: actors.never!.id,
      actor_name: "never",
      last_seen: null,
      sessions_7d: 0,
      agents: [],
      unmapped_events: [],
    });
    assert.ok(!byId.has(actors.revoked!.id), "a revoked actor that never sent is not listed");

    // B sees its own only: its version, its event, its never-sent actor.
    const other = await fleet(server, b);
    assert.deepEqual(other.map((row) => row.actor_id), [b.actorId, theirs!.id]);
    assert.deepEqual(other[0].agents, [
      { agent: "claude-code", agent_version: "9.9.9", last_seen: iso(NOW - MINUTE) },
    ]);
    assert.equal(other[0].sessions_7d, 3);
    assert.deepEqual(other[0].unmapped_events.map((row: Json) => row.event_name), [
      "subagent_completed",
    ]);
  },
);

engineTest(
  "GET /v1/fleet?silent_days=N lists the actors with nothing for N days, and those that never sent",
  async () => {
    await using server = await startTestServer({ overrides: { clock: () => NOW } });
    const org = await server.createOrg();
    const other = await server.createOrg("Other");
    const actors = await createActors(server, org, ["silent", "quiet", "never"]);
    await send(server, org.ingestKey, [call("d1", "t1", NOW - HOUR, "2.1.240")]);
    await send(server, actors.silent!.key, [call("s1", "t2", NOW - 3 * DAY, "2.1.240")]);
    await send(server, actors.quiet!.key, [call("q1", "t3", NOW - 3 * DAY + 1, "2.1.240")]);
    // Another organization's silent actor is not this one's.
    await send(server, other.ingestKey, [call("o1", "t4", NOW - 30 * DAY, "2.1.240")]);
    const silentFor = async (days: number) =>
      (await fleet(server, org, `?silent_days=${days}`)).map((row) => row.actor_id);
    const { silent, quiet, never } = actors;
    assert.deepEqual(await silentFor(3), [silent!.id, never!.id], "at least 3 days old");
    assert.deepEqual(await silentFor(2), [quiet!.id, silent!.id, never!.id]);
    assert.deepEqual(await silentFor(4), [never!.id]);
    assert.deepEqual(await silentFor(3650), [never!.id]);
    const all = await fleet(server, org, "?silent_days=");
    assert.equal(all.length, 4, "empty is no filter");
    assert.deepEqual(
      (await fleet(server, other, "?silent_days=29")).map((row) => row.last_seen),
      [iso(NOW - 30 * DAY)],
    );
  },
);

engineTest("GET /v1/fleet refuses silent_days outside 1 to 3650", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  for (
    const [value, message] of [
      ["0", "invalid silent_days: 0 < 1"],
      ["3651", "invalid silent_days: 3651 > 3650"],
      ["-1", "invalid silent_days: -1 < 1"],
      ["1.5", 'invalid silent_days: "1.5" (must be an integer from 1 to 3650)'],
      ["week", 'invalid silent_days: "week" (must be an integer from 1 to 3650)'],
    ] as const
  ) {
    const { status, body } = await server.getJson(`/v1/fleet?silent_days=${value}`, org.apiKey);
    assert.equal(status, 400, value);
    assert.deepEqual(body, { error: { code: "invalid_request", message } });
  }
  const anonymous = await server.get("/v1/fleet");
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
});

engineTest("GET /v1/fleet answers at most 1,000 actors, never-sent ones last by id", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const keys = await server.keyStore();
  const created: string[] = [];
  try {
    for (let i = 0; i < 1000; i++) created.push((await keys.createActor(org.orgId)).actor_id);
  } finally {
    await keys.close();
  }
  await send(server, org.ingestKey, [call("d1", "t1", Date.now() - HOUR, "2.1.240")]);
  const rows = await fleet(server, org);
  assert.equal(rows.length, 1000);
  assert.equal(rows[0].actor_id, org.actorId, "the actor that sent comes first");
  assert.deepEqual(
    rows.slice(1).map((row) => row.actor_id),
    created.toSorted().slice(0, 999),
    "then those that never sent, by id, up to the bound",
  );
});
