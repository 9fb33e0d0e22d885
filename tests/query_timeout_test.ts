import assert from "node:assert/strict";
import { engineTest, startTestServer, testDatabase } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

engineTest("a query past --query-timeout-ms is stopped and answered 500 internal", async () => {
  const dir = await Deno.makeTempDir();
  await using store = await testDatabase();
  const database = store?.url;
  try {
    let org;
    {
      await using loader = await startTestServer({ dir, database });
      org = await loader.createOrg();
      for (let batch = 0; batch < 40; batch++) {
        const records = Array.from({ length: 1000 }, (_, i) => {
          const n = batch * 1000 + i;
          return toolResult({ session: `s${n % 5000}`, id: `t${n}`, tool: "Read", timeMs: T0 + n });
        });
        const response = await loader.ingest("/v1/logs", claudeExport(records), org.ingestKey);
        assert.equal(response.status, 200);
        await response.body?.cancel();
      }
    }
    await using server = await startTestServer({ dir, database, flags: { queryTimeoutMs: "1" } });
    const started = performance.now();
    const slow = await server.getJson(
      `/v1/sessions?after=${new Date(T0).toISOString()}&limit=500`,
      org.apiKey,
    );
    assert.equal(slow.status, 500);
    assert.equal(slow.body.error.code, "internal");
    assert.ok(performance.now() - started < 5000, "the query was stopped, not waited for");
    const health = await server.get("/healthz");
    assert.equal(health.status, 200);
    await health.body?.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
