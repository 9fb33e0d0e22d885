import assert from "node:assert/strict";
import { encodeJson, generateExports } from "../src/demo/mod.ts";
import type { GenOptions } from "../src/demo/mod.ts";
import { mapRecord } from "../src/ingest/agents/mod.ts";
import { otlpJsonRecords } from "./_otlp_json_records.ts";

const options: GenOptions = {
  actors: 4,
  days: 5,
  seed: 42,
  now: new Date("2026-11-22T15:30:00Z"),
  sessionsPerActorPerDay: 4,
};

Deno.test("generateExports gives the same exports for the same options", () => {
  const first = [...generateExports(options)].map((e) => JSON.stringify(e));
  const again = [...generateExports(options)].map((e) => JSON.stringify(e));
  assert.deepEqual(again, first);
  const other = [...generateExports({ ...options, seed: 43 })].map((e) => JSON.stringify(e));
  assert.notDeepEqual(other, first);
});

Deno.test("generateExports output maps cleanly and matches its own counts", () => {
  const nowMs = options.now.getTime();
  const windowStart = nowMs - options.days * 86_400_000;
  const agents = new Set<string>();
  const categories = new Map<string, number>();
  const outcomes = { ok: 0, error: 0, rejected: 0 };
  const commands: string[] = [];
  const identities = new Map<string, string>();
  let exports = 0;
  let toolCalls = 0;
  let mapped = 0;
  let modelCalls = 0;
  let costed = 0;
  const actorsSeen = new Set<number>();

  for (const e of generateExports({ ...options, batchRecords: 150 })) {
    exports++;
    actorsSeen.add(e.actor);
    toolCalls += e.toolCalls;
    // What an exporter would send, decoded again.
    const records = otlpJsonRecords(JSON.parse(new TextDecoder().decode(encodeJson(e.body))));
    assert.equal(records.length, e.records);
    assert.ok(e.records <= 150);
    let callsHere = 0;
    for (const record of records) {
      const result = mapRecord(record);
      assert.notEqual(result.status, "unusable", JSON.stringify(result));
      if (result.status !== "mapped") continue;
      for (const event of result.events) {
        // Unique per session, except a decision and the result of its call.
        const key = `${event.sessionId} ${event.identity}`;
        const before = identities.get(key);
        assert.ok(
          before === undefined || (before === "decision" && event.kind === "tool_call"),
          `${key}: ${before} then ${event.kind}`,
        );
        identities.set(key, event.kind);
        assert.ok(event.timeMs < nowMs && event.timeMs >= windowStart, String(event.timeMs));
        agents.add(event.agentSystem);
        if (event.kind === "tool_call") {
          mapped++;
          callsHere++;
          outcomes[event.outcome]++;
          categories.set(event.category, (categories.get(event.category) ?? 0) + 1);
          collectCommand(event, commands);
        } else if (event.kind === "decision" && event.rejects) {
          callsHere++;
          outcomes.rejected++;
          collectCommand(event, commands);
        } else if (event.kind === "model_call") {
          modelCalls++;
          if (event.costUsd !== null) costed++;
          assert.ok(event.inputTokens >= 0 && event.outputTokens > 0);
        }
      }
    }
    assert.equal(callsHere, e.toolCalls);
  }

  assert.deepEqual([...actorsSeen].sort(), [0, 1, 2, 3]);
  assert.ok(exports > 4);
  assert.equal(outcomes.ok + outcomes.error + outcomes.rejected, toolCalls);
  assert.ok(mapped > 500, `only ${mapped} calls`);
  assert.deepEqual([...agents].sort(), ["claude-code", "codex_cli_rs", "gemini-cli"]);
  for (const category of ["code_exec", "file_read", "file_write", "web_fetch", "mcp", "other"]) {
    assert.ok((categories.get(category) ?? 0) > 0, category);
  }
  const errorRate = outcomes.error / toolCalls;
  const rejectRate = outcomes.rejected / toolCalls;
  assert.ok(errorRate > 0.02 && errorRate < 0.09, `error rate ${errorRate}`);
  assert.ok(rejectRate > 0.01 && rejectRate < 0.06, `reject rate ${rejectRate}`);
  assert.ok(modelCalls > 0 && costed > 0 && costed < modelCalls);
  assert.ok(commands.some((c) => c.includes("curl -sSL https://api.github.com/")));
  assert.ok(commands.some((c) => c.includes("rm -rf") || c.includes("git push --force")));
});

Deno.test("generateExports keeps every record before now, even for a session started just before", () => {
  const now = new Date("2026-11-22T07:05:00Z");
  for (
    const e of generateExports({ actors: 3, days: 1, seed: 9, now, sessionsPerActorPerDay: 6 })
  ) {
    for (const record of otlpJsonRecords(e.body)) {
      const ns = record.timeUnixNano ?? record.observedTimeUnixNano;
      assert.ok(ns !== null && ns < BigInt(now.getTime()) * 1_000_000n);
    }
  }
});

/** Arguments must be JSON text; keeps them (re-encoded) for the command checks. */
function collectCommand(event: { arguments?: string }, into: string[]): void {
  if (event.arguments === undefined) return;
  const parsed: unknown = JSON.parse(event.arguments);
  into.push(JSON.stringify(parsed));
}

Deno.test("generateExports in time order sends every actor's exports, merged by start time", () => {
  const byActor = [...generateExports(options)];
  const byTime = [...generateExports({ ...options, order: "time" })];
  // The same exports, each actor's in its own order...
  assert.deepEqual(
    byTime.map((e) => JSON.stringify(e)).sort(),
    byActor.map((e) => JSON.stringify(e)).sort(),
  );
  for (let actor = 0; actor < options.actors; actor++) {
    assert.deepEqual(
      byTime.filter((e) => e.actor === actor),
      byActor.filter((e) => e.actor === actor),
    );
  }
  // ...never going back in time, and each export's start is its first record's time.
  for (let i = 1; i < byTime.length; i++) {
    assert.ok(byTime[i]!.startMs >= byTime[i - 1]!.startMs, `export ${i} goes back in time`);
  }
  for (const e of byTime) {
    const first = (e.body as {
      resourceLogs: {
        scopeLogs: { logRecords: { timeUnixNano: string; observedTimeUnixNano: string }[] }[];
      }[];
    }).resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!;
    const nanos = first.timeUnixNano === "0" ? first.observedTimeUnixNano : first.timeUnixNano;
    assert.equal(BigInt(e.startMs) * 1_000_000n, BigInt(nanos));
  }
  // Actors interleave (actor order would switch actors only actors - 1 times).
  const switches = byTime.filter((e, i) => i > 0 && e.actor !== byTime[i - 1]!.actor).length;
  assert.ok(switches > options.actors * 4, `${switches} switches`);
});
