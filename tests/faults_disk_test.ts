/**
 * A full disk (finding 4 of issue #14): the server runs in its own mount
 * namespace on a small tmpfs; the test fills it, sees `503` with
 * `Retry-After` on ingest and `/readyz` not ready, frees the space and sees
 * ingest recover without a restart, with every acknowledged export stored.
 *
 * @module
 */
import assert from "node:assert/strict";
import { connectPostgres } from "../src/store/postgres/client.ts";
import { createTestOrg, startTestServer } from "./_harness.ts";
import { createTestDatabase, pgTestUrl } from "./_pg.ts";
import { canMount, listedToolCalls, spawnNamespacedServer } from "./_faults.ts";
import { claudeExport, toolResult } from "./_otlp.ts";

const CALLS_PER_EXPORT = 40;

function exportBody(n: number): string {
  const now = Date.now() - 60_000;
  return JSON.stringify(claudeExport(
    Array.from({ length: CALLS_PER_EXPORT }, (_, i) =>
      toolResult({
        session: `disk-${n}`,
        id: `toolu_${n}_${i}`,
        tool: "Bash",
        timeMs: now + i,
        input: { command: `echo ${"x".repeat(2000)} ${n} ${i}` },
      })),
  ));
}

async function post(url: string, key: string, body: string): Promise<Response> {
  return await fetch(`${url}/v1/logs`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body,
  });
}

/**
 * A server in its own mount namespace over a 24 MiB tmpfs at `<base>/mnt`
 * holding a copy of a new data directory with an organization.
 */
async function serveOnTmpfs(base: string) {
  const seed = `${base}/seed`;
  const mount = `${base}/mnt`;
  await Deno.mkdir(mount);
  const org = await createTestOrg(seed);
  const server = await spawnNamespacedServer(
    'mount -t tmpfs -o size=24m tmpfs "$1" && cp -a "$2" "$1/data" || exit 1\nshift 2',
    [mount, seed],
    ["--data", `${mount}/data`, "--log-level", "error"],
  );
  return { org, mount, server };
}

Deno.test({
  name: "a full disk answers 503 with Retry-After and /readyz 503, then recovers with nothing lost",
  ignore: !canMount,
  fn: async () => {
    const base = await Deno.makeTempDir({ prefix: "agent-telemetry-disk-" });
    try {
      const { org, mount, server: started } = await serveOnTmpfs(base);
      await using server = started;
      const acknowledged = new Set<number>();
      let n = 0;
      for (; n < 3; n++) {
        const ok = await post(server.ingestUrl, org.ingestKey, exportBody(n));
        assert.equal(ok.status, 200, await ok.text());
        acknowledged.add(n);
      }
      // Fill the tmpfs (dd stops at ENOSPC), then send until the store refuses.
      await server.inside('dd if=/dev/zero of="$1/filler" bs=64k 2>/dev/null; true', mount);
      const refused: number[] = [];
      let refusal: Response | null = null;
      for (; refusal === null && n < 300; n++) {
        const answer = await post(server.ingestUrl, org.ingestKey, exportBody(n));
        if (answer.status === 200) {
          await answer.body?.cancel();
          acknowledged.add(n);
        } else {
          refusal = answer;
          refused.push(n);
        }
      }
      assert.ok(refusal, "the store never refused an export on a full disk");
      const refusalBody = await refusal.json();
      assert.equal(refusal.status, 503, `${JSON.stringify(refusalBody)}\n${server.stderr()}`);
      assert.equal(refusalBody.error.code, "unavailable");
      assert.match(refusalBody.error.message, /disk space/);
      assert.ok(Number(refusal.headers.get("retry-after")) >= 1);
      for (const listener of [server.ingestUrl, server.queryUrl]) {
        const ready = await fetch(`${listener}/readyz`);
        assert.equal(ready.status, 503, "ready while the disk is full");
        await ready.body?.cancel();
      }
      // Insights over data the replica has not copied: it cannot write, so they are
      // unavailable for a while (retryable), never an internal error.
      const insight = await fetch(`${server.queryUrl}/v1/insights/activity?window=7d`, {
        headers: { authorization: `Bearer ${org.apiKey}` },
      });
      const insightBody = await insight.json();
      assert.equal(insight.status, 503, `${JSON.stringify(insightBody)}\n${server.stderr()}`);
      assert.equal(insightBody.error.code, "insights_unavailable");
      assert.ok(Number(insight.headers.get("retry-after")) >= 1);
      // A second export is refused the same way, not failed.
      const again = await post(server.ingestUrl, org.ingestKey, exportBody(n));
      assert.equal(again.status, 503);
      assert.ok(again.headers.get("retry-after"));
      await again.body?.cancel();
      refused.push(n++);

      assert.equal(await server.inside('rm -f "$1/filler"', mount), 0);
      const ready = await fetch(`${server.ingestUrl}/readyz`);
      assert.equal(ready.status, 200, "not ready after the space was freed");
      await ready.body?.cancel();
      for (const retried of refused) {
        const answer = await post(server.ingestUrl, org.ingestKey, exportBody(retried));
        assert.equal(answer.status, 200, await answer.text());
        acknowledged.add(retried);
      }

      const calls = await listedToolCalls(server.queryUrl, org.apiKey);
      assert.equal(calls.length, acknowledged.size * CALLS_PER_EXPORT);
      // Insights recover without a restart, with every acknowledged call.
      const recovered = await fetch(`${server.queryUrl}/v1/insights/activity?window=7d`, {
        headers: { authorization: `Bearer ${org.apiKey}` },
      });
      const recoveredBody = await recovered.json();
      assert.equal(recovered.status, 200, `${JSON.stringify(recoveredBody)}\n${server.stderr()}`);
      assert.equal(recoveredBody.summary.total_calls, calls.length);
      assert.equal(new Set(calls.map((call) => call.id)).size, calls.length);
      const sessions = new Set(calls.map((call) => call.session_id));
      for (const stored of acknowledged) {
        assert.ok(sessions.has(`disk-${stored}`), `disk-${stored}`);
      }
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});

Deno.test({
  name: "a PostgreSQL store made read-only answers 503 with Retry-After, then recovers",
  ignore: pgTestUrl() === null,
  fn: async () => {
    await using database = await createTestDatabase();
    await using server = await startTestServer({ database: database.url });
    const org = await server.createOrg();
    const name = new URL(database.url).pathname.slice(1);
    const admin = connectPostgres(pgTestUrl()!, { max: 1 });
    // New sessions of the database start read-only; the ingest pool's are cut so it reconnects.
    const setReadOnly = async (on: boolean) => {
      await admin.unsafe(
        `ALTER DATABASE ${name} ${on ? "SET default_transaction_read_only = on" : "RESET ALL"}`,
      );
      await admin.unsafe(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = '${name}' AND application_name = 'agent-telemetry ingest'`,
      );
    };
    try {
      const first = await post(server.ingestUrl, org.ingestKey, exportBody(0));
      assert.equal(first.status, 200, await first.text());
      await setReadOnly(true);
      let readOnlyRefusals = 0;
      for (let attempt = 0; attempt < 20 && readOnlyRefusals === 0; attempt++) {
        const answer = await post(server.ingestUrl, org.ingestKey, exportBody(1));
        const text = await answer.text();
        // The first attempts may meet a cut connection: also 503, as "unreachable".
        assert.equal(answer.status, 503, text);
        assert.ok(Number(answer.headers.get("retry-after")) >= 1);
        const body = JSON.parse(text);
        assert.equal(body.error.code, "unavailable");
        if (/cannot be written/.test(body.error.message)) readOnlyRefusals++;
      }
      assert.equal(readOnlyRefusals, 1, "never refused as read-only");
      const notReady = await fetch(`${server.ingestUrl}/readyz`);
      assert.equal(notReady.status, 503, "ready while the database refuses writes");
      await notReady.body?.cancel();

      await setReadOnly(false);
      let stored = false;
      for (let attempt = 0; attempt < 20 && !stored; attempt++) {
        const answer = await post(server.ingestUrl, org.ingestKey, exportBody(1));
        stored = answer.status === 200;
        await answer.body?.cancel();
      }
      assert.ok(stored, "ingest did not recover");
      const ready = await fetch(`${server.ingestUrl}/readyz`);
      assert.equal(ready.status, 200);
      await ready.body?.cancel();
      const calls = await listedToolCalls(server.queryUrl, org.apiKey);
      assert.equal(calls.length, 2 * CALLS_PER_EXPORT);
    } finally {
      await admin.end();
    }
  },
});
