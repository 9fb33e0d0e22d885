import assert from "node:assert/strict";
import { runCliProcess, startTestServer } from "./_harness.ts";
import { apiRequest, claudeExport, toolResult } from "./_otlp.ts";

const DAY = 86_400_000;
const NOW = Date.now();

Deno.test("retention deletes calls older than --retention-days and keeps sessions consistent", async () => {
  await using server = await startTestServer({ flags: { retentionDays: "90" } });
  const org = await server.createOrg();
  const old = NOW - 120 * DAY;
  const recent = NOW - 10 * DAY;
  const body = claudeExport([
    toolResult({ session: "mixed", id: "m1", tool: "Bash", timeMs: old }),
    toolResult({ session: "mixed", id: "m2", tool: "Read", timeMs: old + 1000, success: false }),
    toolResult({ session: "mixed", id: "m3", tool: "Read", timeMs: recent }),
    apiRequest({ session: "mixed", timeMs: old, model: "m", costUsd: 2, requestId: "r1" }),
    apiRequest({ session: "mixed", timeMs: recent, model: "m", costUsd: 0.5, requestId: "r2" }),
    toolResult({ session: "gone", id: "g1", tool: "Bash", timeMs: old }),
  ]);
  const sent = await server.ingest("/v1/logs", body, org.ingestKey);
  await sent.body?.cancel();
  const result = await server.server.runRetention();
  assert.equal(result.toolCalls, 3);
  assert.equal(result.modelCalls, 1);
  const sessions = await server.getJson("/v1/sessions", org.apiKey);
  assert.deepEqual(sessions.body.data.map((s: { session_id: string }) => s.session_id), ["mixed"]);
  const mixed = sessions.body.data[0];
  assert.equal(mixed.tool_call_count, 1);
  assert.equal(mixed.error_count, 0);
  assert.equal(mixed.first_seen, new Date(recent).toISOString());
  assert.equal(mixed.cost_usd, 0.5);
  assert.equal((await server.getJson("/v1/sessions/gone", org.apiKey)).status, 404);
  const again = await server.server.runRetention();
  assert.equal(again.toolCalls + again.modelCalls, 0, "a second pass finds nothing");
});

Deno.test("the disk cap deletes the oldest days first until the store fits", async () => {
  await using server = await startTestServer({ flags: { maxDiskBytes: "1500000" } });
  const org = await server.createOrg();
  for (let day = 30; day >= 1; day--) {
    const records = Array.from({ length: 200 }, (_, i) =>
      toolResult({
        session: `day-${day}`,
        id: `d${day}-${i}`,
        tool: "Bash",
        timeMs: NOW - day * DAY + i,
        input: { command: `echo ${"x".repeat(400)} ${day} ${i}` },
      }));
    const response = await server.ingest("/v1/logs", claudeExport(records), org.ingestKey);
    await response.body?.cancel();
  }
  const result = await server.server.runRetention();
  assert.ok(result.toolCalls > 0, "something was deleted");
  assert.ok(result.reclaimedBytes > 0, `reclaimed ${result.reclaimedBytes} bytes`);
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(`${server.dir}/telemetry.db`, { readOnly: true });
  try {
    const row = db.prepare(
      "SELECT (page_count - freelist_count) * page_size AS used FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()",
    ).get() as { used: number };
    assert.ok(row.used <= 1_500_000, `used ${row.used} bytes`);
  } finally {
    db.close();
  }
  // The freed pages went back to the file system: the file itself shrank to the cap.
  const fileBytes = Deno.statSync(`${server.dir}/telemetry.db`).size;
  assert.ok(fileBytes <= 1_500_000, `telemetry.db is ${fileBytes} bytes`);
  assert.ok(result.reclaimedBytes >= 1_000_000, `reclaimed ${result.reclaimedBytes} bytes`);
  const sessions = await server.getJson("/v1/sessions?limit=500", org.apiKey);
  const days = sessions.body.data.map((s: { session_id: string }) => Number(s.session_id.slice(4)));
  assert.ok(days.length > 0 && days.length < 30);
  assert.equal(Math.max(...days), 30 - (30 - days.length), "the newest days are kept");
  assert.deepEqual(days, [...days].sort((a, b) => a - b), "newest first, oldest gone");
  assert.equal(days[0], 1);
});

Deno.test("--retention-days below 90 is refused", async () => {
  const result = await runCliProcess([
    "serve",
    "--retention-days",
    "30",
    "--data",
    "/nonexistent/x",
  ]);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /at least 90 days/);
});
