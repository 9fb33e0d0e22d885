import assert from "node:assert/strict";
import {
  createTestOrg,
  engineTest,
  listenerUrl,
  serveArgs,
  spawnCli,
  startTestServer,
  testDatabase,
} from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { assertAcknowledgedStored } from "./_acknowledged.ts";
import { T0 } from "./_scenario.ts";

const CALLS_PER_EXPORT = 50;

function exportOf(n: number) {
  return claudeExport(Array.from({ length: CALLS_PER_EXPORT }, (_, i) =>
    toolResult({
      session: `crash-${n}`,
      id: `c${n}-${i}`,
      tool: "Bash",
      timeMs: T0 + n * 1000 + i,
      input: { command: `echo ${n} ${i}` },
    })));
}

engineTest(
  "SIGKILL during ingest loses no acknowledged export and duplicates nothing",
  async () => {
    const dir = await Deno.makeTempDir();
    await using store = await testDatabase();
    const database = store?.url;
    try {
      const org = await createTestOrg(dir, "Acme", database ?? null);
      const { child, stdout } = await spawnCli(
        serveArgs(dir, "--log-level", "error", ...(database ? ["--database", database] : [])),
        /OTLP ingest listening on/,
      );
      const ingestUrl = listenerUrl(stdout, "OTLP ingest");
      const acknowledged: number[] = [];
      let sent = 0;
      // Killed while ingesting, a moment after the 8th acknowledged export: a fixed time after
      // start acknowledged too few on a loaded machine. At most 60 s in any case.
      const kill = () => child.kill("SIGKILL");
      let killer = setTimeout(kill, 60_000);
      try {
        for (let n = 0; n < 100_000; n++) {
          sent = n + 1;
          const response = await fetch(`${ingestUrl}/v1/logs`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              authorization: `Bearer ${org.ingestKey}`,
            },
            body: JSON.stringify(exportOf(n)),
          });
          await response.body?.cancel();
          if (response.status === 200 && acknowledged.push(n) === 8) {
            clearTimeout(killer);
            killer = setTimeout(kill, 200);
          }
          // Re-send every fifth export, as an exporter retry would.
          if (n % 5 === 0) {
            const retry = await fetch(`${ingestUrl}/v1/logs`, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                authorization: `Bearer ${org.ingestKey}`,
              },
              body: JSON.stringify(exportOf(n)),
            });
            await retry.body?.cancel();
          }
        }
      } catch {
        // The connection dies with the server.
      } finally {
        clearTimeout(killer);
      }
      await child.status;
      assert.ok(acknowledged.length > 3, `acknowledged ${acknowledged.length}`);

      await using server = await startTestServer({ dir, database });
      await assertAcknowledgedStored(server, org.apiKey, {
        prefix: "crash",
        acknowledged,
        sent,
        callsPerExport: CALLS_PER_EXPORT,
      });
      const total = await server.getJson(`/v1/tool-calls?session_id=crash-0&limit=500`, org.apiKey);
      assert.equal(total.body.data.length, CALLS_PER_EXPORT, "a retried export is stored once");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
