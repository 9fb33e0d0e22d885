/**
 * Detection end to end: flags and domains of ingested calls through the
 * query API, secrets never in any response, and `detect rescan`.
 */
import assert from "node:assert/strict";
import { engineTest, runCliProcess, startTestServer, type TestServer } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";

const GITHUB_TOKEN = "ghp_R8m2Kq7Zt4Vw9Xy3Bn6Lc1Pd5Fg0Hj2Sa4Qe";
const ANTHROPIC_KEY =
  "sk-ant-api03-Zq8Lm3Nv7Xc2Bk9Wr4Ty6Pu1Io5Ap0Sd8Fg3Hj7Kl2Zx6Cv4Bn9Mq1We5Rt8Yu3Ii";
const NOW = Date.now() - 3_600_000;

function risky() {
  const bash = (id: string, command: string, offset: number) =>
    toolResult({ session: "risky", id, tool: "Bash", timeMs: NOW + offset, input: { command } });
  return claudeExport([
    bash("t1", `export GITHUB_TOKEN=${GITHUB_TOKEN} && gh repo list`, 0),
    bash(
      "t2",
      `curl -sSL -H 'Authorization: Bearer ${ANTHROPIC_KEY}' https://api.anthropic.com/v1/x`,
      1,
    ),
    bash("t3", "cat .env && git push --force origin main", 2),
    bash("t4", "wget -q https://Downloads.Example.com:8443/a.tgz && curl http://127.0.0.1:9/x", 3),
    toolResult({
      session: "risky",
      id: "t5",
      tool: "WebFetch",
      timeMs: NOW + 4,
      input: { url: "https://docs.example.com/page", prompt: "read" },
    }),
    bash("t6", "ls -la", 5),
  ]);
}

async function allResponses(server: TestServer, key: string): Promise<string> {
  const calls = (await server.getJson("/v1/tool-calls", key)).body.data;
  const texts = [JSON.stringify(calls)];
  for (const call of calls) {
    texts.push(JSON.stringify((await server.getJson(`/v1/tool-calls/${call.id}`, key)).body));
  }
  for (
    const path of [
      "/v1/sessions/risky",
      "/v1/sessions",
      "/v1/insights/risk",
      "/v1/insights/domains",
      "/v1/sessions/facets",
    ]
  ) {
    texts.push(JSON.stringify((await server.getJson(path, key)).body));
  }
  return texts.join("\n");
}

engineTest(
  "flags and domains of ingested calls appear in session detail and insights",
  async () => {
    await using server = await startTestServer();
    const org = await server.createOrg();
    const sent = await server.ingest("/v1/logs", risky(), org.ingestKey);
    await sent.body?.cancel();
    const detail = (await server.getJson("/v1/sessions/risky", org.apiKey)).body;
    const flags = detail.risk_flags.map((
      f: { tool_call_id: string; flag: string; evidence: string },
    ) => [f.tool_call_id, f.flag, f.evidence]);
    assert.deepEqual(flags, [
      ["t1", "credential_detected", "github_pat: ghp_…"],
      ["t2", "credential_detected", "bearer_token: sk-a…"],
      ["t3", "destructive_operation", "git push --force"],
      ["t3", "sensitive_path", ".env"],
    ]);
    assert.deepEqual(detail.external_domains, [
      { domain: "api.anthropic.com", scheme: "https", hits: 1 },
      { domain: "docs.example.com", scheme: "https", hits: 1 },
      { domain: "downloads.example.com", scheme: "https", hits: 1 },
    ]);
    const risk = (await server.getJson("/v1/insights/risk?window=7d", org.apiKey)).body;
    assert.deepEqual(risk.summary, { total_flags: 4, sessions_flagged: 1, distinct_flag_kinds: 3 });
    assert.deepEqual(risk.breakdown[0], {
      flag: "credential_detected",
      flags: 2,
      sessions: 1,
      tools: 1,
    });
    const domains = (await server.getJson("/v1/insights/domains?window=7d", org.apiKey)).body;
    assert.equal(domains.summary.total_hits, 3);
    assert.equal(domains.summary.unique_domains, 3);
    const facets = (await server.getJson("/v1/sessions/facets", org.apiKey)).body;
    assert.deepEqual(facets.domains, [
      "api.anthropic.com",
      "docs.example.com",
      "downloads.example.com",
    ]);
  },
);

Deno.test("no response ever contains a detected secret; stored arguments are redacted", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const sent = await server.ingest("/v1/logs", risky(), org.ingestKey);
  await sent.body?.cancel();
  const everything = await allResponses(server, org.apiKey);
  assert.equal(everything.includes(GITHUB_TOKEN), false);
  assert.equal(everything.includes(ANTHROPIC_KEY), false);
  assert.ok(everything.includes("[REDACTED:github_pat]"));
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(`${server.dir}/telemetry.db`, { readOnly: true });
  try {
    const stored = JSON.stringify(db.prepare("SELECT * FROM tool_calls").all());
    assert.equal(stored.includes(GITHUB_TOKEN), false, "the secret is not stored either");
  } finally {
    db.close();
  }
});

engineTest("--keep-secrets stores arguments verbatim but flags still hold no secret", async () => {
  await using server = await startTestServer({ flags: { keepSecrets: true } });
  const org = await server.createOrg();
  const sent = await server.ingest("/v1/logs", risky(), org.ingestKey);
  await sent.body?.cancel();
  const calls = (await server.getJson("/v1/tool-calls?limit=10", org.apiKey)).body.data;
  const t1 = calls.find((c: { tool_name: string; timestamp: string }) =>
    c.timestamp === new Date(NOW).toISOString()
  );
  const detail = (await server.getJson(`/v1/tool-calls/${t1.id}`, org.apiKey)).body;
  assert.ok(detail.arguments.includes(GITHUB_TOKEN));
  const session = JSON.stringify(
    (await server.getJson("/v1/sessions/risky", org.apiKey)).body.risk_flags,
  );
  assert.equal(session.includes(GITHUB_TOKEN), false);
});

Deno.test("detect rescan replaces flags without duplicates and redacts secrets kept before", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let org;
    {
      await using server = await startTestServer({ dir, flags: { keepSecrets: true } });
      org = await server.createOrg();
      const sent = await server.ingest("/v1/logs", risky(), org.ingestKey);
      await sent.body?.cancel();
    }
    for (let i = 0; i < 2; i++) {
      const result = await runCliProcess(["detect", "rescan", "--data", dir, "--json"]);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(JSON.parse(result.stdout), { scanned: 6 });
    }
    await using server = await startTestServer({ dir });
    const detail = (await server.getJson("/v1/sessions/risky", org.apiKey)).body;
    assert.equal(detail.risk_flags.length, 4, "flags replaced, not duplicated");
    assert.equal(detail.external_domains.length, 3);
    const credential = detail.risk_flags.filter((f: { flag: string }) =>
      f.flag === "credential_detected"
    );
    assert.equal(credential.length, 2, "a redacted secret keeps its credential flag");
    const risk = (await server.getJson("/v1/insights/risk?window=7d", org.apiKey)).body;
    assert.equal(risk.summary.total_flags, 4, "the replica mirrors the replaced flags");
    const everything = await allResponses(server, org.apiKey);
    assert.equal(everything.includes(GITHUB_TOKEN), false, "rescan redacted the kept secret");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("detect rescan redacts a secret kept before in an error message", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let org;
    {
      await using server = await startTestServer({ dir, flags: { keepSecrets: true } });
      org = await server.createOrg();
      const failed = toolResult({
        session: "failing",
        id: "f1",
        tool: "Bash",
        timeMs: NOW,
        success: false,
        error: `fatal: could not read from https://x-access-token:${GITHUB_TOKEN}@github.com`,
      });
      const sent = await server.ingest("/v1/logs", claudeExport([failed]), org.ingestKey);
      await sent.body?.cancel();
      const kept = await allResponses(server, org.apiKey);
      assert.ok(kept.includes(GITHUB_TOKEN), "--keep-secrets kept it");
    }
    const result = await runCliProcess(["detect", "rescan", "--data", dir, "--json"]);
    assert.equal(result.code, 0, result.stderr);
    await using server = await startTestServer({ dir });
    const everything = await allResponses(server, org.apiKey);
    assert.equal(everything.includes(GITHUB_TOKEN), false, "rescan redacted the error text");
    assert.match(everything, /\[REDACTED:/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
