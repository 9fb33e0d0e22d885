/**
 * `/metrics` (issue #14, finding 8): label values are bounded whatever
 * senders call themselves, and the endpoint is not served to the network
 * without a token.
 */
import assert from "node:assert/strict";
import { serveFlags, serveFlagSpec } from "../src/cli/serve.ts";
import { parseFlags } from "../src/cli/usage.ts";
import { metricsAccessOf, resolveServeConfig } from "../src/config.ts";
import { createIngestApp } from "../src/server/ingest_app.ts";
import { agentLabel, ServiceMetrics } from "../src/http/metrics.ts";
import { openKeyStoreFor } from "../src/store/open_stores.ts";
import { engineTest, startTestServer } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

/** One export from `count` services named `claude-code-<name>-<i>`, one tool call each. */
function exportFromServices(name: string, count: number) {
  return {
    resourceLogs: Array.from({ length: count }, (_, i) =>
      claudeExport(
        [toolResult({ session: `${name}-${i}`, id: `${name}-${i}`, tool: "Read", timeMs: T0 + i })],
        `claude-code-${name}-${i}`,
      ).resourceLogs[0]),
  };
}

engineTest("300 made-up service names do not grow /metrics", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const scrape = async () => await (await fetch(`${server.ingestUrl}/metrics`)).text();
  const send = async (name: string, count: number) => {
    const response = await server.ingest(
      "/v1/logs",
      exportFromServices(name, count),
      org.ingestKey,
    );
    assert.equal(response.status, 200, await response.text());
  };
  await send("warmup", 3);
  await scrape();
  const before = await scrape();
  await send("made-up", 300);
  const after = await scrape();
  assert.doesNotMatch(after, /made-up/, "no sender's name is a label value");
  // The same series with larger counts (and one more request counted): a few digits more.
  assert.ok(
    after.length - before.length < 100,
    `/metrics grew by ${after.length - before.length} bytes`,
  );
  assert.match(
    after,
    /^agent_telemetry_ingested_records_total\{agent="claude-code",kind="tool_call"\} 303$/m,
  );
});

Deno.test("agentLabel keeps the known agents and names every other service other", () => {
  const cases: [string, string][] = [
    ["claude-code", "claude-code"],
    ["claude-code-vscode", "claude-code"],
    ["codex_cli_rs", "codex"],
    ["codex_exec", "codex"],
    ["gemini-cli", "gemini-cli"],
    ["genai", "genai"],
    ["other", "other"],
    ["acme-secret-project", "other"],
    ["", "other"],
  ];
  for (const [service, label] of cases) assert.equal(agentLabel(service), label, service);
});

Deno.test("/metrics access follows the ingest listener's address and --metrics-token", () => {
  const token = "t0ken-of-sixteen-chars";
  for (const hostname of ["127.0.0.1", "127.0.0.2", "::1", "localhost", "LOCALHOST"]) {
    assert.deepEqual(metricsAccessOf({ hostname, port: 4318 }, undefined), { kind: "open" });
  }
  for (const hostname of ["0.0.0.0", "::", "192.0.2.2", "10.0.0.1", "fd00::2", "example.com"]) {
    assert.deepEqual(metricsAccessOf({ hostname, port: 4318 }, undefined), { kind: "refused" });
    assert.deepEqual(metricsAccessOf({ hostname, port: 4318 }, token), { kind: "token", token });
  }
  const dir = Deno.makeTempDirSync();
  try {
    const env = (values: Record<string, string>) => (name: string) => values[name];
    const exposed = resolveServeConfig({ data: dir, ingestListen: "0.0.0.0:4318" }, env({}));
    assert.deepEqual(exposed.metricsAccess, { kind: "refused" });
    const byEnv = resolveServeConfig(
      { data: dir, ingestListen: "0.0.0.0:4318" },
      env({ AGENT_TELEMETRY_METRICS_TOKEN: token }),
    );
    assert.deepEqual(byEnv.metricsAccess, { kind: "token", token });
    const byFlag = resolveServeConfig(
      serveFlags({
        ...parseFlags(["--data", dir, "--metrics-token", token], serveFlagSpec),
      }),
      env({}),
    );
    assert.deepEqual(byFlag.metricsAccess, { kind: "token", token });
    assert.deepEqual(resolveServeConfig({ data: dir }, env({})).metricsAccess, { kind: "open" });
    assert.throws(
      () => resolveServeConfig({ data: dir, metricsToken: "short" }, env({})),
      /Invalid metrics token/,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("/metrics of an ingest listener configured off loopback without a token is refused", async () => {
  const dir = await Deno.makeTempDir();
  const keys = await openKeyStoreFor(dir, null);
  try {
    const config = resolveServeConfig({ data: dir, ingestListen: "0.0.0.0:4318" }, () => undefined);
    const app = createIngestApp({
      keys,
      writer: null,
      maxBytes: config.ingestMaxBytes,
      metrics: new ServiceMetrics(),
      readiness: () => Promise.resolve(),
      logError: () => {},
      metricsAccess: config.metricsAccess,
    });
    // The request as it would reach the listener from the network (no socket is opened).
    const response = await app(new Request("http://192.0.2.2:4318/metrics"));
    assert.equal(response.status, 403);
    const body = await response.json();
    assert.equal(body.error.code, "forbidden");
    assert.match(body.error.message, /--metrics-token/);
    const health = await app(new Request("http://192.0.2.2:4318/healthz"));
    assert.equal(health.status, 200, "the health checks stay open");
    await health.body?.cancel();
  } finally {
    await keys.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("with --metrics-token, /metrics needs that Bearer token", async () => {
  const token = "t0ken-of-sixteen-chars";
  await using server = await startTestServer({ flags: { metricsToken: token } });
  const scrape = (authorization?: string) =>
    fetch(`${server.ingestUrl}/metrics`, {
      headers: authorization ? { authorization } : {},
    });
  for (const authorization of [undefined, "Bearer wrong-token-of-16-chars", `bearer ${token}`]) {
    const response = await scrape(authorization);
    assert.equal(response.status, 401, String(authorization));
    assert.equal((await response.json()).error.code, "unauthenticated");
  }
  const allowed = await scrape(`Bearer ${token}`);
  assert.equal(allowed.status, 200);
  assert.match(await allowed.text(), /agent_telemetry_http_requests_total/);
});
