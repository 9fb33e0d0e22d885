/**
 * `/v1/sessions` filtered by actor, team or agent, answered from the
 * session_actors rollup (issue #16), against the same request with
 * `after=1970-01-01T00:00:00Z` added: that filter selects every call, so the
 * answer must be the same, but it is computed by grouping the matching calls
 * (filtered_sessions_page). Pages are walked with their cursors. The data has
 * sessions shared by several actors and agents, ties in time, a rejected call
 * replaced by its result, and calls deleted by retention.
 */
import assert from "node:assert/strict";
import {
  DOMAIN_WALK_SESSIONS,
  rollupFilter,
  type SessionFilters,
} from "../src/store/telemetry_queries.ts";
import { engineTest, startTestServer, type TestServer } from "./_harness.ts";
import { clockFrom } from "../src/time.ts";
import { claudeExport, toolDecision, toolResult } from "./_otlp.ts";

const DAY = 86_400_000;
/** Times of the data: a fixed day, whatever day the suite runs (the server's clock is set). */
const T0 = Date.UTC(2036, 0, 10, 10, 0, 0);
/**
 * The server's clock: a year before T0, so that its own retention pass (10 s
 * after start) deletes nothing of the data; only the test's pass does.
 */
const SERVER_CLOCK_START = T0 - 365 * DAY;
const EPOCH = "1970-01-01T00:00:00.000Z";

type Value = string | number;

/** A Codex log record (`codex.<event>`); Codex reports the model on its tool calls. */
function codexEvent(event: string, timeMs: number, attrs: Record<string, Value>) {
  return {
    timeUnixNano: "0",
    observedTimeUnixNano: `${BigInt(timeMs) * 1_000_000n}`,
    attributes: Object.entries({
      "event.name": `codex.${event}`,
      "event.timestamp": new Date(timeMs).toISOString(),
      ...attrs,
    }).map(([key, value]) => ({ key, value: { stringValue: String(value) } })),
  };
}

function codexExport(service: string, records: unknown[]) {
  return {
    resourceLogs: [{
      resource: {
        attributes: [
          { key: "service.name", value: { stringValue: service } },
          { key: "service.version", value: { stringValue: "0.98.0" } },
        ],
      },
      scopeLogs: [{ scope: { name: "codex_otel" }, logRecords: records }],
    }],
  };
}

interface Call {
  session: string;
  id: string;
  timeMs: number;
  outcome: "ok" | "error";
  model: string;
  /** The shell command: a curl reaches a domain. */
  command?: string;
}

/** The agents of the data: two Codex originators and Claude Code (no model on its calls). */
const AGENTS = ["codex_cli_rs", "codex_exec", "claude-code"] as const;
type Agent = typeof AGENTS[number];

function codexResult(call: Call) {
  return codexEvent("tool_result", call.timeMs, {
    "conversation.id": call.session,
    "tool_name": "shell",
    "call_id": call.id,
    "model": call.model,
    "arguments": JSON.stringify({ command: ["bash", "-lc", call.command ?? "make"] }),
    "duration_ms": "40",
    "success": call.outcome === "ok" ? "true" : "false",
    "output": call.outcome === "ok" ? "done" : "make: *** [all] Error 2",
  });
}

function exportOf(agent: Agent, calls: Call[]) {
  if (agent === "claude-code") {
    return claudeExport(calls.map((call) =>
      toolResult({
        session: call.session,
        id: call.id,
        tool: "Bash",
        timeMs: call.timeMs,
        success: call.outcome === "ok",
        input: { command: call.command ?? "make" },
      })
    ));
  }
  return codexExport(agent, calls.map(codexResult));
}

async function ingest(server: TestServer, key: string, body: unknown) {
  const response = await server.ingest("/v1/logs", body, key);
  assert.equal(response.status, 200, await response.text());
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every page of a session list, walked with its cursors (`limit` 3). */
async function allPages(server: TestServer, apiKey: string, query: string): Promise<unknown[]> {
  const rows: unknown[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const url = `/v1/sessions?${query}&limit=3${
      cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`
    }`;
    const { status, body } = await server.getJson(url, apiKey);
    assert.equal(status, 200, JSON.stringify(body));
    rows.push(...body.data);
    cursor = body.next_cursor;
    if (cursor === undefined) return rows;
  }
  throw new Error(`More than 100 pages: ${query}`);
}

engineTest(
  "session lists by actor, team, agent or domain from the rollup equal the calls' grouping",
  async (t) => {
    await using server = await startTestServer({
      flags: { retentionDays: "90" },
      overrides: { clock: clockFrom(SERVER_CLOCK_START) },
    });
    const org = await server.createOrg();
    const store = await server.keyStore();
    const actorB = await store.createActor(org.orgId, "b");
    const actorC = await store.createActor(org.orgId, "c");
    const actorD = await store.createActor(org.orgId, "d");
    await store.close();
    const actors = [
      { id: org.actorId, key: org.ingestKey },
      { id: actorB.actor_id, key: actorB.ingest_key },
      { id: actorC.actor_id, key: actorC.ingest_key },
    ];

    // 40 sessions; each call by a random actor and agent, at one of few times
    // (ties between sessions' last_seen and within a session), a third of the
    // sessions with calls older than the retention period.
    const next = random(16);
    const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
    const batches = new Map<string, { actor: number; agent: Agent; calls: Call[] }>();
    let n = 0;
    for (let s = 0; s < 40; s++) {
      const session = `s${String(s).padStart(2, "0")}`;
      const calls = 1 + Math.floor(next() * 6);
      for (let c = 0; c < calls; c++) {
        const actor = s % 7 === 0 ? 0 : Math.floor(next() * 3);
        const agent = pick(AGENTS);
        const old = s % 3 === 0 && c % 2 === 0;
        const timeMs = (old ? T0 - 120 * DAY : T0) + Math.floor(next() * 12) * 60_000;
        const call: Call = {
          session,
          id: `call_${n++}`,
          timeMs,
          outcome: next() < 0.25 ? "error" : "ok",
          model: pick(["gpt-5-codex", "gpt-5", "o4-mini"]),
          command: s === 4 && c === 0
            ? "curl -s https://docs.rare.example/guide"
            : next() < 0.3
            ? "curl -sSL https://api.github.com/repos/acme/app"
            : undefined,
        };
        const key = `${actor}\u0000${agent}`;
        const batch = batches.get(key) ?? { actor, agent, calls: [] };
        batch.calls.push(call);
        batches.set(key, batch);
      }
    }
    // Two exports per actor and agent, alternating calls: a session's row grows over batches.
    for (const batch of batches.values()) {
      const key = actors[batch.actor]!.key;
      for (const parity of [0, 1]) {
        const calls = batch.calls.filter((_, i) => i % 2 === parity);
        if (calls.length > 0) await ingest(server, key, exportOf(batch.agent, calls));
      }
    }
    // More sessions than a domain's walk checks (DOMAIN_WALK_SESSIONS), older
    // than the 40 above, by another actor and agent; the oldest eight reach a
    // domain no other session does. So a domain many recent sessions reach is
    // found by the walk, and a rare one from the domain's own sessions.
    const filler = Array.from({ length: DOMAIN_WALK_SESSIONS + 100 }, (_, i) =>
      toolResult({
        session: `f${String(i).padStart(4, "0")}`,
        id: `toolu_f${i}`,
        tool: "Bash",
        timeMs: T0 - DAY - i * 60_000,
        input: {
          command: i >= DOMAIN_WALK_SESSIONS + 92 ? "curl https://old.example.net/x" : "ls",
        },
      }));
    for (let i = 0; i < filler.length; i += 700) {
      await ingest(
        server,
        actorD.ingest_key,
        claudeExport(filler.slice(i, i + 700), "claude-code-filler"),
      );
    }
    // Rejected calls, then (another export) their results, later and by another model
    // or outcome: the result replaces the reject (a recount of its session).
    await ingest(
      server,
      actors[1]!.key,
      codexExport("codex_exec", [
        codexEvent("tool_decision", T0 + 20 * 60_000, {
          "conversation.id": "s05",
          "tool_name": "shell",
          "call_id": "call_rejected_1",
          "model": "gpt-5",
          "decision": "denied",
          "source": "user",
        }),
      ]),
    );
    await ingest(
      server,
      actors[2]!.key,
      claudeExport([
        toolDecision({
          session: "s06",
          id: "toolu_rejected_2",
          tool: "Edit",
          timeMs: T0 + 25 * 60_000,
          decision: "reject",
        }),
      ]),
    );

    const filters: [string, SessionFilters][] = [
      [`actor=${actors[0]!.id}`, { actor: actors[0]!.id }],
      [`actor=${actors[1]!.id}`, { actor: actors[1]!.id }],
      [`actor=${actors[2]!.id}`, { actor: actors[2]!.id }],
      [`team=${actors[0]!.id},${actors[1]!.id}`, { team: [actors[0]!.id, actors[1]!.id] }],
      [`team=${actors[1]!.id}&team=${actors[2]!.id}`, { team: [actors[1]!.id, actors[2]!.id] }],
      ["agent=codex_exec", { agent: "codex_exec" }],
      ["agent=claude-code", { agent: "claude-code" }],
      [`actor=${actors[1]!.id}&agent=codex_cli_rs`, {
        actor: actors[1]!.id,
        agent: "codex_cli_rs",
      }],
      [
        `team=${actors[0]!.id},${actors[2]!.id}&agent=codex_exec`,
        { team: [actors[0]!.id, actors[2]!.id], agent: "codex_exec" },
      ],
      ["actor=act_unknown", { actor: "act_unknown" }],
      ["domain=api.github.com", { domain: "api.github.com" }],
      ["domain=docs.rare.example", { domain: "docs.rare.example" }],
      ["domain=old.example.net", { domain: "old.example.net" }],
      ["domain=nowhere.example", { domain: "nowhere.example" }],
    ];
    const compare = async (stage: string) => {
      for (const [query, parsed] of filters) {
        assert.notEqual(rollupFilter(parsed), null, `${query} is answered by the rollup`);
        const fromRollup = await allPages(server, org.apiKey, query);
        const fromCalls = await allPages(server, org.apiKey, `${query}&after=${EPOCH}`);
        assert.deepEqual(fromRollup, fromCalls, `${stage}: ${query}`);
        if (!/unknown|nowhere/.test(query)) assert.ok(fromRollup.length > 0, `${stage}: ${query}`);
      }
    };

    await t.step("after ingest, with rejected calls", () => compare("ingest"));

    await t.step("after rejected calls are replaced by their results", async () => {
      await ingest(
        server,
        actors[1]!.key,
        codexExport("codex_exec", [
          codexResult({
            session: "s05",
            id: "call_rejected_1",
            timeMs: T0 + 30 * 60_000,
            outcome: "ok",
            model: "o4-mini",
          }),
        ]),
      );
      await ingest(
        server,
        actors[0]!.key,
        claudeExport([
          toolResult({
            session: "s06",
            id: "toolu_rejected_2",
            tool: "Edit",
            timeMs: T0 + 26 * 60_000,
          }),
        ]),
      );
      const s05 =
        (await server.getJson(`/v1/sessions?actor=${actors[1]!.id}&limit=500`, org.apiKey))
          .body.data.find((row: { session_id: string }) => row.session_id === "s05");
      assert.equal(s05.model, "o4-mini", "the result's model and time replace the reject's");
      assert.equal(s05.last_seen, new Date(T0 + 30 * 60_000).toISOString());
      await compare("replaced");
    });

    await t.step("after retention deletes the old calls", async () => {
      const result = await server.server.runRetention(T0 + DAY);
      assert.ok(result.toolCalls > 0, "retention deleted calls");
      await compare("retention");
    });
  },
);
