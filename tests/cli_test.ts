import assert from "node:assert/strict";
import {
  engineTest,
  listenerUrl,
  runCliProcess,
  serveArgs,
  spawnCli,
  startTestServer,
} from "./_harness.ts";

async function json(args: string[]) {
  const result = await runCliProcess([...args, "--json"]);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.trim().split("\n");
  assert.equal(lines.length, 1, `one JSON object on stdout, got: ${result.stdout}`);
  return JSON.parse(lines[0]!);
}

engineTest(
  "CLI admin commands print one JSON object each, also while the server runs",
  async () => {
    await using server = await startTestServer();
    const data = [
      "--data",
      server.dir,
      ...(server.database ? ["--database", server.database] : []),
    ];
    const org = await json(["org", "create", "--name", "Acme", ...data]);
    assert.deepEqual(Object.keys(org).sort(), ["id", "name"]);
    const member = await json([
      "member",
      "add",
      "--org",
      org.id,
      "--email",
      "a@acme.test",
      ...data,
    ]);
    assert.deepEqual(member, { id: member.id, org: org.id, email: "a@acme.test" });
    const key = await json(["key", "create", "--org", org.id, "--member", member.id, ...data]);
    assert.match(key.key, /^wb_api_[0-9A-Za-z]{43,}$/);
    assert.deepEqual(Object.keys(key).sort(), ["id", "key", "member", "org"]);

    const ping = await server.getJson("/v1/ping", key.key);
    assert.equal(ping.status, 200, "a key created by the CLI works at once on the running server");

    const listed = await json(["key", "list", "--org", org.id, ...data]);
    assert.equal(listed.keys.length, 1);
    assert.equal(listed.keys[0].id, key.id);
    assert.equal("revoked_at" in listed.keys[0], false);
    assert.equal(JSON.stringify(listed).includes(key.key), false, "key list never shows the key");

    const actor = await json(["actor", "create", "--org", org.id, "--name", "laptop", ...data]);
    assert.match(actor.actor_id, /^act_/);
    assert.match(actor.ingest_key, /^wb_ingest_[0-9A-Za-z]{43,}$/);

    const revoked = await json(["key", "revoke", "--id", key.id, ...data]);
    assert.equal(revoked.id, key.id);
    assert.match(revoked.revoked_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal((await server.getJson("/v1/ping", key.key)).status, 401);

    const second = await json(["key", "create", "--org", org.id, "--member", member.id, ...data]);
    const removed = await json([
      "member",
      "remove",
      "--org",
      org.id,
      "--member",
      member.id,
      ...data,
    ]);
    assert.deepEqual(removed, { member: member.id, revoked_keys: 1 });
    assert.equal((await server.getJson("/v1/ping", second.key)).status, 401);

    const version = await json(["version"]);
    assert.deepEqual(Object.keys(version).sort(), ["service", "version"]);
  },
);

Deno.test("CLI bad arguments print one line and exit 2", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    const cases = [
      ["nope"],
      ["org", "create", "--data", dir],
      ["org", "create", "--name", "x", "--bogus", "--data", dir],
      ["org", "explode", "--data", dir],
      ["member", "add", "--org", "org_missing", "--email", "a@b.c", "--data", dir],
      ["key", "revoke", "--id", "key_missing", "--data", dir],
      ["serve", "--listen", "127.0.0.1:99999", "--data", `${dir}/never`],
    ];
    for (const args of cases) {
      await t.step(args.slice(0, 2).join(" "), async () => {
        const result = await runCliProcess(args);
        assert.equal(result.code, 2, result.stderr);
        assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
        assert.match(result.stderr, /^error: /);
      });
    }
    await t.step("a bad port creates nothing", async () => {
      await assert.rejects(Deno.stat(`${dir}/never`), Deno.errors.NotFound);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("demo ingests synthetic telemetry through the real path and prints a working key", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const demo = ["demo", "--actors", "2", "--days", "3", "--log-level", "warn"];
    const { child, stdout: out } = await spawnCli(
      [...demo, ...serveArgs(dir).slice(1)],
      /Press Ctrl-C/,
    );
    const key = /Demo API key: (wb_api_\S+)/.exec(out)?.[1];
    const queryUrl = listenerUrl(out, "query API");
    assert.ok(key, out);
    const headers = { authorization: `Bearer ${key}` };
    const sessions = await (await fetch(`${queryUrl}/v1/sessions?limit=500`, { headers })).json();
    assert.ok(sessions.data.length > 5, `demo sessions: ${sessions.data.length}`);
    const calls = await (await fetch(`${queryUrl}/v1/tool-calls?outcome=rejected`, { headers }))
      .json();
    assert.ok(calls.data.length > 0, "the demo has rejected calls");
    // Every productivity figure has data: the demo sends Claude Code's metrics too.
    const productivity = await (await fetch(`${queryUrl}/v1/insights/productivity`, { headers }))
      .json();
    const summary = productivity.summary;
    assert.ok(summary.commits > 0 && summary.active_time_user_s > 0, JSON.stringify(summary));
    assert.ok(summary.edits_accepted > 0 && summary.lines_added > 0, JSON.stringify(summary));
    assert.match(out, /curl -s -H "Authorization: Bearer wb_api_/);
    // The dashboard's address beside the key, among the first lines a newcomer reads.
    const lines = out.split("\n");
    const dashboard = lines.findIndex((line) => line.startsWith(`Dashboard: ${queryUrl}/ui/`));
    assert.ok(dashboard >= 0 && dashboard < 20, out);
    const ui = await fetch(`${queryUrl}/ui/`);
    assert.equal(ui.status, 200);
    await ui.body?.cancel();
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Runs `demo` in `cwd` until it serves, counts the sessions its key sees, then stops it. */
async function demoRun(
  cwd: string,
  env: Record<string, string>,
): Promise<{ key: string; sessions: number }> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      new URL("../main.ts", import.meta.url).pathname,
      "demo",
      "--actors",
      "1",
      "--days",
      "2",
      "--log-level",
      "warn",
      ...serveArgs("unused").slice(3),
    ],
    cwd,
    env,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let out = "";
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  while (!/Press Ctrl-C/.test(out)) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  await reader.cancel();
  try {
    const key = /Demo API key: (wb_api_\S+)/.exec(out)?.[1];
    assert.ok(key, out);
    const page = await fetch(`${listenerUrl(out, "query API")}/v1/sessions?limit=500`, {
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(page.status, 200);
    return { key, sessions: (await page.json()).data.length };
  } finally {
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0, out);
  }
}

Deno.test("demo writes ./data-demo, not ./data nor AGENT_TELEMETRY_DATA, and a rerun reuses its one Demo organization", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    const env = { AGENT_TELEMETRY_DATA: `${cwd}/production` };
    const first = await demoRun(cwd, env);
    const second = await demoRun(cwd, env);
    assert.notEqual(first.key, second.key, "each run prints a new key");
    assert.ok(first.sessions > 0, "the first run ingests");
    assert.equal(second.sessions, first.sessions, "a rerun serves the same data, no more, no less");
    assert.deepEqual([...Deno.readDirSync(cwd)].map((entry) => entry.name), ["data-demo"]);

    const data = ["--data", `${cwd}/data-demo`];
    const orgs = await json(["org", "list", ...data]);
    assert.deepEqual(orgs.orgs.map((org: { name: string }) => org.name), ["Demo"]);
    const org = orgs.orgs[0].id;
    assert.equal((await json(["member", "list", "--org", org, ...data])).members.length, 1);
    assert.equal((await json(["actor", "list", "--org", org, ...data])).actors.length, 1);
    const listed = await json(["key", "list", "--org", org, ...data]);
    assert.equal(listed.keys.length, 2, "one API key per run, the first still valid");
    assert.equal(
      listed.keys.filter((key: { revoked_at?: string }) => key.revoked_at).length,
      0,
    );
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});
