/**
 * The SQLite writer thread writes export requests that wait together in one
 * transaction (a savepoint each): a failing export stores nothing and costs
 * the others nothing, and nothing acknowledged is lost when the server is
 * killed with several exports in flight.
 */
import assert from "node:assert/strict";
import { receiveExport } from "../src/ingest/receive.ts";
import type { TelemetryEvent } from "../src/model/telemetry.ts";
import { emptyIngestSummary } from "../src/store/ingest_batch.ts";
import { migrate, openDatabase } from "../src/store/sqlite/database.ts";
import { telemetryMigrations } from "../src/store/sqlite/migrations.ts";
import { TelemetryWriter } from "../src/store/sqlite/telemetry_writer.ts";
import { createTestOrg, listenerUrl, serveArgs, spawnCli, startTestServer } from "./_harness.ts";
import { claudeExport, toolResult } from "./_otlp.ts";
import { assertAcknowledgedStored } from "./_acknowledged.ts";
import { T0 } from "./_scenario.ts";

const CALLS_PER_EXPORT = 20;

function exportOf(n: number) {
  return claudeExport(Array.from({ length: CALLS_PER_EXPORT }, (_, i) =>
    toolResult({
      session: `group-${n}`,
      id: `g${n}-${i}`,
      tool: "Bash",
      timeMs: T0 + n * 1000 + i,
      input: { command: `echo ${n} ${i}` },
    })));
}

function eventsOf(n: number): TelemetryEvent[] {
  const body = new TextEncoder().encode(JSON.stringify(exportOf(n)));
  return receiveExport(body, { encoding: "json", pathSignal: "logs" }).events;
}

Deno.test("an export that fails inside a group stores nothing and the others are kept", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/telemetry.db`);
  try {
    migrate(db, telemetryMigrations);
    const writer = new TelemetryWriter(db, { redactSecrets: true });
    const sender = { orgId: "org_a", actorId: "act_a" };
    // The middle export's last call breaks a CHECK constraint after its other calls and its
    // session row were written: only its savepoint may be rolled back.
    const broken = eventsOf(1).map((event, i, all): TelemetryEvent =>
      i === all.length - 1 && event.kind === "tool_call"
        ? { ...event, outcome: "bogus" as "ok" }
        : event
    );
    const answers = writer.ingestGroup([
      { sender, events: eventsOf(0) },
      { sender, events: broken },
      { sender, events: eventsOf(2) },
    ]);
    assert.deepEqual(answers[0], { ...emptyIngestSummary(), toolCalls: CALLS_PER_EXPORT });
    assert.ok(answers[1] instanceof Error, "the broken export answers its error");
    assert.match(answers[1].message, /CHECK constraint failed/);
    assert.deepEqual(answers[2], { ...emptyIngestSummary(), toolCalls: CALLS_PER_EXPORT });

    const counts = db.prepare(
      "SELECT session_id, tool_call_count FROM sessions ORDER BY session_id",
    ).all().map((row) => [row.session_id, row.tool_call_count]);
    assert.deepEqual(counts, [["group-0", CALLS_PER_EXPORT], ["group-2", CALLS_PER_EXPORT]]);
    const calls = db.prepare("SELECT session_id, count(*) AS n FROM tool_calls GROUP BY 1")
      .all().map((row) => [row.session_id, row.n]);
    assert.deepEqual(calls, [["group-0", CALLS_PER_EXPORT], ["group-2", CALLS_PER_EXPORT]]);
    // The counter the replica catches up from covers every stored row, and no row shares a seq.
    const seq = db.prepare(
      "SELECT (SELECT value FROM counters WHERE name = 'seq') AS counter, max(seq) AS top, " +
        "count(DISTINCT seq) AS distinct_seqs, count(*) AS n FROM tool_calls",
    ).get()!;
    assert.equal(seq.counter, writer.currentSeq());
    assert.ok(Number(seq.counter) >= Number(seq.top), `counter ${seq.counter} < ${seq.top}`);
    assert.equal(seq.distinct_seqs, seq.n);

    // A retried group stores nothing twice.
    const again = writer.ingestGroup([
      { sender, events: eventsOf(0) },
      { sender, events: eventsOf(2) },
    ]);
    assert.deepEqual(again, [emptyIngestSummary(), emptyIngestSummary()]);
    assert.equal(db.prepare("SELECT count(*) AS n FROM tool_calls").get()!.n, 2 * CALLS_PER_EXPORT);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("keys a rolled-back export added are not bound by the next export of its group", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/telemetry.db`);
  try {
    migrate(db, telemetryMigrations);
    const writer = new TelemetryWriter(db, { redactSecrets: true });
    // A new organization, session and actor: the failing export adds their keys (schema 15),
    // then its savepoint takes them back; the retry in the same transaction must add them again.
    const sender = { orgId: "org_new", actorId: "act_new" };
    const broken = eventsOf(5).map((event, i, all): TelemetryEvent =>
      i === all.length - 1 && event.kind === "tool_call"
        ? { ...event, outcome: "bogus" as "ok" }
        : event
    );
    const answers = writer.ingestGroup([
      { sender, events: broken },
      { sender, events: eventsOf(5) },
    ]);
    assert.ok(answers[0] instanceof Error, "the broken export answers its error");
    assert.deepEqual(answers[1], { ...emptyIngestSummary(), toolCalls: CALLS_PER_EXPORT });
    const seen = db.prepare(
      "SELECT org_id, session_id, actor_id, count(*) AS n FROM tool_calls GROUP BY 1, 2, 3",
    ).all().map((row) => [row.org_id, row.session_id, row.actor_id, row.n]);
    assert.deepEqual(seen, [["org_new", "group-5", "act_new", CALLS_PER_EXPORT]]);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGKILL with several exports in flight loses no acknowledged export", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const org = await createTestOrg(dir, "Acme", null);
    const { child, stdout } = await spawnCli(
      serveArgs(dir, "--log-level", "error"),
      /OTLP ingest listening on/,
    );
    const ingestUrl = listenerUrl(stdout, "OTLP ingest");
    const acknowledged: number[] = [];
    let next = 0;
    const kill = () => child.kill("SIGKILL");
    let killer = setTimeout(kill, 60_000);
    // Four senders keep the writer's queue full, so exports are written in groups.
    const sender = async () => {
      for (;;) {
        const n = next++;
        const response = await fetch(`${ingestUrl}/v1/logs`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${org.ingestKey}` },
          body: JSON.stringify(exportOf(n)),
        });
        await response.body?.cancel();
        if (response.status === 200 && acknowledged.push(n) === 40) {
          clearTimeout(killer);
          killer = setTimeout(kill, 150);
        }
      }
    };
    await Promise.allSettled([sender(), sender(), sender(), sender()]);
    clearTimeout(killer);
    await child.status;
    assert.ok(acknowledged.length >= 40, `acknowledged ${acknowledged.length}`);

    await using server = await startTestServer({ dir });
    await assertAcknowledgedStored(server, org.apiKey, {
      prefix: "group",
      acknowledged,
      sent: next,
      callsPerExport: CALLS_PER_EXPORT,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
