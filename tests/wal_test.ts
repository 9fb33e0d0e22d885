import assert from "node:assert/strict";
import { startTestServer } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { T0 } from "./_scenario.ts";

Deno.test("the WAL is checkpointed and starts over while telemetry keeps arriving", async () => {
  await using server = await startTestServer();
  const org = await server.createOrg();
  const padding = "x".repeat(1500);
  for (let batch = 0; batch < 30; batch++) {
    const records = Array.from({ length: 1000 }, (_, i) =>
      toolResult({
        session: `s${batch}`,
        id: `w${batch}-${i}`,
        tool: "Bash",
        timeMs: T0 + batch * 1000 + i,
        input: { command: `echo ${padding} ${batch} ${i}` },
      }));
    const response = await server.ingest("/v1/logs", claudeExport(records), org.ingestKey);
    assert.equal(response.status, 200);
    await response.body?.cancel();
  }
  const database = (await Deno.stat(`${server.dir}/telemetry.db`)).size;
  const wal = (await Deno.stat(`${server.dir}/telemetry.db-wal`)).size;
  assert.ok(database > 48 * 2 ** 20, `database ${database} bytes`);
  assert.ok(wal < 32 * 2 ** 20, `WAL ${wal} bytes after ${database} bytes of data`);
});
