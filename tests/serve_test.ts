import assert from "node:assert/strict";
import {
  createTestOrg,
  engineTest,
  listenerUrl,
  runCliProcess,
  serveArgs,
  spawnCli,
  startTestServer,
  testDatabase,
} from "./_harness.ts";
import { loadScenario } from "./_scenario.ts";

const PATHS = [
  "/v1/sessions",
  "/v1/sessions/s2",
  "/v1/tool-calls",
  "/v1/tool-calls/facets",
  "/v1/insights/activity?window=30d",
  "/v1/insights/top-tools?window=30d",
  "/v1/insights/domains?window=30d",
];

async function openssl(args: string[], cwd: string): Promise<void> {
  const result = await new Deno.Command("openssl", { args, cwd, stdout: "null", stderr: "piped" })
    .output();
  if (!result.success) throw new Error(new TextDecoder().decode(result.stderr));
}

/** A throwaway CA and a leaf certificate for 127.0.0.1 signed by it. */
async function makeCertificates(dir: string): Promise<{ ca: string; cert: string; key: string }> {
  await openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=test-ca",
  ], dir);
  await openssl([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "leaf.key",
    "-out",
    "leaf.csr",
    "-subj",
    "/CN=127.0.0.1",
  ], dir);
  await Deno.writeTextFile(`${dir}/ext.cnf`, "subjectAltName=IP:127.0.0.1\n");
  await openssl([
    "x509",
    "-req",
    "-in",
    "leaf.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "leaf.pem",
    "-days",
    "2",
    "-extfile",
    "ext.cnf",
  ], dir);
  return {
    ca: await Deno.readTextFile(`${dir}/ca.pem`),
    cert: `${dir}/leaf.pem`,
    key: `${dir}/leaf.key`,
  };
}

engineTest("serve answers /healthz without a key and /v1/ping with one", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const health = await server.getJson("/healthz", "");
  assert.deepEqual(health, { status: 200, body: { status: "ok" } });
  const ping = await server.getJson("/v1/ping", org.apiKey);
  assert.equal(ping.status, 200);
  assert.equal(ping.body.service, "agent-telemetry");
  assert.match(ping.body.version, /^\d+\.\d+\.\d+/);
});

engineTest("serve speaks TLS on both listeners with --tls-cert and --tls-key", async () => {
  const certDir = await Deno.makeTempDir();
  try {
    const tls = await makeCertificates(certDir);
    await using server = await startTestServer({ flags: { tlsCert: tls.cert, tlsKey: tls.key } });
    assert.match(server.queryUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(server.ingestUrl, /^https:\/\//);
    const client = Deno.createHttpClient({ caCerts: [tls.ca] });
    try {
      const org = await server.createOrg();
      const ping = await fetch(`${server.queryUrl}/v1/ping`, {
        client,
        headers: { authorization: `Bearer ${org.apiKey}` },
      });
      assert.equal(ping.status, 200);
      await ping.body?.cancel();
      const ingest = await fetch(`${server.ingestUrl}/v1/logs`, {
        client,
        method: "POST",
        headers: { authorization: `Bearer ${org.ingestKey}`, "content-type": "application/json" },
        body: JSON.stringify({ resourceLogs: [] }),
      });
      assert.equal(ingest.status, 200);
      await ingest.body?.cancel();
    } finally {
      client.close();
    }
  } finally {
    await Deno.remove(certDir, { recursive: true });
  }
});

Deno.test("serve refuses a missing certificate file or an unwritable data directory with exit 2", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    await t.step("missing certificate", async () => {
      const result = await runCliProcess([
        "serve",
        "--data",
        `${dir}/a`,
        "--tls-cert",
        `${dir}/nope.pem`,
        "--tls-key",
        `${dir}/nope.key`,
      ]);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /^error: Cannot read TLS certificate file/);
      await assert.rejects(Deno.stat(`${dir}/a`), Deno.errors.NotFound);
    });
    await t.step("data directory is a file", async () => {
      await Deno.writeTextFile(`${dir}/file`, "");
      // Ephemeral ports: a default port held by another process would be refused first.
      const result = await runCliProcess(
        [
          "serve",
          "--data",
          `${dir}/file/sub`,
          "--listen",
          "127.0.0.1:0",
          "--ingest-listen",
          "127.0.0.1:0",
        ],
      );
      assert.equal(result.code, 2);
      assert.match(result.stderr, /^error: Data directory is not a directory/);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve prints a line per listener, then stops gracefully on SIGTERM", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // At debug, a line per request (at info, a summary a minute: observability_test).
    const args = serveArgs(dir, "--log-level", "debug");
    const { child, stdout } = await spawnCli(args, /OTLP ingest listening on/, {
      stderr: "piped",
    });
    const queryUrl = listenerUrl(stdout, "query API");
    assert.match(listenerUrl(stdout, "OTLP ingest"), /^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${queryUrl}/healthz`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
    child.kill("SIGTERM");
    const status = await child.status;
    assert.equal(status.code, 0);
    const stderr = await new Response(child.stderr).text();
    assert.match(stderr, /"stopped"/);
    const requestLines = stderr.split("\n").filter((line) => line.includes('"message":"request"'));
    assert.equal(requestLines.length, 1, "one structured line per request");
    const line = JSON.parse(requestLines[0]!);
    assert.equal(line.route, "/healthz");
    assert.equal(line.status, 200);
    assert.match(line.request_id, /^[0-9a-f-]{36}$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

engineTest(
  "restarting the server loses nothing, and a deleted analytics.duckdb is harmless",
  async () => {
    const dir = await Deno.makeTempDir();
    await using store = await testDatabase();
    const database = store?.url;
    try {
      let apiKey = "";
      // deno-lint-ignore no-explicit-any
      let before: { status: number; body: any }[] = [];
      {
        await using server = await startTestServer({ dir, database });
        apiKey = (await loadScenario(server)).org.apiKey;
        before = await Promise.all(PATHS.map((path) => server.getJson(path, apiKey)));
      }
      for (const restart of ["plain restart", "replica deleted"]) {
        if (restart === "replica deleted") await Deno.remove(`${dir}/analytics.duckdb`);
        await using server = await startTestServer({ dir, database });
        const after = await Promise.all(PATHS.map((path) => server.getJson(path, apiKey)));
        for (let i = 0; i < PATHS.length; i++) {
          assert.equal(after[i]!.status, 200, String(PATHS[i]));
          if (PATHS[i]!.startsWith("/v1/insights")) {
            delete after[i]!.body.window;
            delete before[i]!.body.window;
          }
          assert.deepEqual(after[i], before[i], `${restart}: ${PATHS[i]}`);
        }
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("--readonly serves an existing directory and refuses telemetry", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const org = await createTestOrg(dir);
    {
      await using primary = await startTestServer({ dir });
      const { claudeExport, toolResult } = await import("./_otlp.ts");
      const body = claudeExport([
        toolResult({ session: "s", id: "a", tool: "Bash", timeMs: 1_795_000_000_000 }),
      ]);
      const sent = await primary.ingest("/v1/logs", body, org.ingestKey);
      assert.equal(sent.status, 200);
      await sent.body?.cancel();
    }
    const before = (await Deno.stat(`${dir}/telemetry.db`)).mtime;
    await using replica = await startTestServer({ dir, flags: { readOnly: true } });
    const list = await replica.getJson("/v1/tool-calls", org.apiKey);
    assert.equal(list.body.data.length, 1);
    const refused = await replica.ingest("/v1/logs", { resourceLogs: [] }, org.ingestKey);
    assert.equal(refused.status, 503);
    assert.equal((await refused.json()).error.code, "read_only");
    const ready = await replica.get("/readyz");
    assert.equal(ready.status, 200);
    await ready.body?.cancel();
    assert.deepEqual((await Deno.stat(`${dir}/telemetry.db`)).mtime, before);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
