/**
 * The replica's per-day rollups (issue #31, sql/duckdb/replica_days.sql): the
 * insights that read them (activity, top-tools, cost) answer byte for byte what
 * their raw-row statements answer (the reference), over the same replica in
 * the same snapshot, for windows whose edges fall mid-day, on midnight and a
 * millisecond either side of it, daily and weekly, ungrouped and grouped by
 * actor, agent and a dimension, narrowed to a dimension's sessions, across two
 * organizations holding the same session ids; as data arrives after a first
 * answer, as logs replace the spans of their calls across midnight, as results
 * replace rejects, as retention deletes rows, and when midnight passes.
 *
 * The replica checked is a second one over the test server's store, opened
 * with its own clock (which day is today for the rollups) on its own file.
 */
import assert from "node:assert/strict";
import { Replica } from "../src/analytics/replica.ts";
import {
  type AnyInsightName,
  type InsightBody,
  type InsightRequest,
  replicaInsightQuery,
} from "../src/analytics/insights.ts";
import type { Granularity, InsightWindow } from "../src/analytics/window.ts";
import type { ReplicaStatement } from "../src/analytics/read_pool.ts";
import type { ModelCallEvent, TelemetryEvent, ToolCallEvent } from "../src/model/telemetry.ts";
import { engineTest, testEngine } from "./_harness.ts";
import {
  assertInsightEqual,
  generateTelemetry,
  type InsightsEnv,
  type InsightsOrg,
  readStoredRows,
  referenceGroupedInsight,
  referenceInsight,
  seededRandom,
  startInsightsEnv,
  windowOf,
} from "./_insights_reference.ts";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const INSIGHTS: readonly AnyInsightName[] = ["activity", "top-tools", "cost"];
const TEAMS = ["red", "blue", "green"];

function midnight(ts: number): number {
  return ts - (((ts % DAY) + DAY) % DAY);
}

/** An organization with a second actor, so that `group_by=actor` has groups. */
interface Org extends InsightsOrg {
  otherActorId: string;
}

async function createOrg(env: InsightsEnv, name: string): Promise<Org> {
  const org = await env.createOrg(name);
  const other = await env.stores.keys.createActor(org.orgId, "second");
  return { ...org, otherActorId: other.actor_id };
}

/** Ingests batches, every other one as the organization's second actor. */
async function ingest(env: InsightsEnv, org: Org, batches: readonly TelemetryEvent[][]) {
  for (const [i, batch] of batches.entries()) {
    const actorId = i % 2 === 0 ? org.actorId : org.otherActorId;
    await env.stores.writer!.ingest({ orgId: org.orgId, actorId }, [...batch]);
  }
}

/** The windows checked at `now`: mid-day edges, midnight edges and a millisecond either side. */
function windows(now: number): [number, number][] {
  const today = midnight(now);
  return [
    [now - 90 * DAY, now],
    [now - 30 * DAY, now],
    [now - 7 * DAY, now],
    [today - 30 * DAY, today],
    [today - 60 * DAY, today - 10 * DAY],
    [today - 20 * DAY + 1, today - 5 * DAY - 1],
    [today - 20 * DAY - 1, today - 5 * DAY + 1],
    [today - 40 * DAY + 5 * HOUR, today - 2 * DAY],
    [today - 12 * DAY, now + 2 * DAY],
  ];
}

/** One grouping or narrowing of a request, with the sessions the route would read from the store. */
interface Variant {
  label: string;
  filters?: InsightRequest["filters"];
  grouping?: InsightRequest["grouping"];
}

/** Ungrouped, by actor, by agent, by a dimension, and narrowed to a dimension's sessions. */
function variants(sessions: readonly string[], seed: number): Variant[] {
  const random = seededRandom(seed);
  const team = sessions.map(() => TEAMS[Math.floor(random() * TEAMS.length)]!);
  const withTeam = sessions.filter((_, i) => i % 5 !== 0);
  const values = withTeam.map((session) => team[sessions.indexOf(session)]!);
  const red = withTeam.filter((_, i) => values[i] === "red");
  return [
    { label: "" },
    { label: "group_by=actor", grouping: { by: "actor" } },
    { label: "group_by=agent", grouping: { by: "agent" } },
    {
      label: "group_by=dim.team",
      grouping: { by: "dim.team", sessions: withTeam, values },
    },
    { label: "dim.team=red", filters: { dims: [["team", "red"]], sessions: red } },
    {
      label: "dim.team=red&group_by=agent",
      filters: { dims: [["team", "red"]], sessions: red },
      grouping: { by: "agent" },
    },
  ];
}

/** Statement parameters as the replica binds them (integers as BIGINT). */
function bound(params: Record<string, string | number | readonly string[]>) {
  const out: ReplicaStatement["params"] = {};
  for (const [name, value] of Object.entries(params)) {
    out[name] = typeof value === "number" ? BigInt(value) : value;
  }
  return out;
}

/**
 * Every rolled-up insight, window, granularity and variant of each
 * organization: the rollups' answer and the raw rows', read in one snapshot,
 * as the same JSON text. Returns how many answers read whole days from the rollups.
 */
async function assertDaysMatchRaw(
  replica: Replica,
  orgs: readonly { orgId: string; variants: Variant[] }[],
  now: number,
  label: string,
): Promise<number> {
  let rolledUp = 0;
  for (const { orgId, variants } of orgs) {
    for (const name of INSIGHTS) {
      for (const [start, end] of windows(now)) {
        for (const granularity of ["daily", "weekly"] as Granularity[]) {
          const window: InsightWindow = { window: "90d", granularity, start, end };
          // Groups do not depend on the granularity: weekly, ungrouped and narrowed only.
          const checked = granularity === "daily"
            ? variants
            : variants.filter((variant) => variant.grouping === undefined);
          for (const variant of checked) {
            const request: InsightRequest = { name, orgId, window, ...variant };
            const days = replicaInsightQuery(request, replica.daysThrough);
            const raw = replicaInsightQuery(request, null);
            const statements = [...days.statements, ...raw.statements].map((s) => ({
              sql: s.sql,
              params: bound(s.params),
            }));
            const results = await replica.read(statements, Date.now() + 60_000);
            const fromDays = days.body(results.slice(0, days.statements.length));
            const fromRaw = raw.body(results.slice(days.statements.length));
            const where = `${label}: ${orgId} ${name} [${new Date(start).toISOString()}, ${
              new Date(end).toISOString()
            }) ${granularity} ${variant.label}`;
            assert.equal(JSON.stringify(fromDays), JSON.stringify(fromRaw), where);
            const readsDays = days.statements.some((s) =>
              /\b(activity|tool|model)_days\b/.test(s.sql)
            );
            const wholeDay = Number(days.statements[0]!.params.day_hi ?? 0) >
              Number(days.statements[0]!.params.day_lo ?? 0);
            if (readsDays && wholeDay) rolledUp++;
          }
        }
      }
    }
  }
  return rolledUp;
}

/** The answers the test server gives over HTTP, against the plain TypeScript reference. */
async function assertServerMatchesReference(env: InsightsEnv, orgs: readonly InsightsOrg[]) {
  const raw = await readStoredRows(env);
  for (const org of orgs) {
    for (const name of INSIGHTS) {
      for (const query of ["window=7d", "window=30d", "window=90d&granularity=weekly"]) {
        const path = `/v1/insights/${name}?${query}`;
        const { status, body } = await env.get(path, org.apiKey);
        assert.equal(status, 200, `${path}: ${JSON.stringify(body)}`);
        assertInsightEqual(body, referenceInsight(raw, name, org.orgId, windowOf(body)), path);
        const grouped = await env.get(`${path}&group_by=agent`, org.apiKey);
        assertInsightEqual(
          grouped.body as InsightBody,
          referenceGroupedInsight(raw, name, org.orgId, windowOf(grouped.body), { by: "agent" }),
          `${path}&group_by=agent`,
        );
      }
    }
  }
}

/** A model call of `sessionId` at `timeMs`. */
function modelCall(sessionId: string, identity: string, timeMs: number, n: number): ModelCallEvent {
  return {
    kind: "model_call",
    sessionId,
    identity,
    timeMs,
    agentSystem: "claude-code",
    agentVersion: "2.1.0",
    providerName: "anthropic",
    model: n % 2 === 0 ? "claude-sonnet-4-5" : "edge-model",
    inputTokens: 1000 + n,
    outputTokens: 100 + n,
    cacheReadTokens: n,
    cacheCreationTokens: 1,
    costUsd: n % 3 === 0 ? null : 0.25 + n / 8,
    durationMs: 10,
  };
}

/**
 * Tool and model calls at a midnight and a millisecond before it: a day's
 * first and the day before's last.
 */
function edgeCalls(prefix: string, midnights: readonly number[]): TelemetryEvent[] {
  return midnights.flatMap((day, i) =>
    [day - 1, day].flatMap((timeMs, j): TelemetryEvent[] => [{
      kind: "tool_call",
      sessionId: `s0000${i}`,
      identity: `${prefix}-edge-${i}-${j}`,
      timeMs,
      agentSystem: j === 0 ? "codex" : "claude-code",
      agentVersion: "1.0.0",
      toolName: j === 0 ? "Edge" : "Midnight",
      toolType: "builtin",
      category: "other",
      outcome: j === 0 ? "error" : "ok",
      durationMs: 100 + i,
      resultSizeBytes: 1,
      source: "otlp_logs",
      toolCallId: `${prefix}-edge-${i}-${j}`,
      arguments: "{}",
    }, modelCall(`s0000${i}`, `${prefix}-edge-model-${i}-${j}`, timeMs, i * 2 + j)])
  );
}

/** A call stored first from its span at `spanTs`, then its log at `logTs` (which replaces it). */
function spanThenLog(sessionId: string, identity: string, spanTs: number, logTs: number) {
  const call: ToolCallEvent = {
    kind: "tool_call",
    sessionId,
    identity,
    timeMs: spanTs,
    agentSystem: "claude-code",
    agentVersion: "2.1.0",
    toolName: "Bash",
    toolType: "builtin",
    category: "code_exec",
    outcome: "ok",
    durationMs: 700,
    resultSizeBytes: 10,
    source: "otlp_traces",
    toolCallId: identity,
    traceId: "0123456789abcdef0123456789abcdef",
    spanId: "0123456789abcdef",
    arguments: JSON.stringify({ command: "ls" }),
  };
  const log: ToolCallEvent = {
    ...call,
    timeMs: logTs,
    toolName: "Read",
    category: "file_read",
    outcome: "error",
    durationMs: 1234,
    source: "otlp_logs",
    traceId: undefined,
    spanId: undefined,
    arguments: JSON.stringify({ "file_path": "/app/x.ts" }),
  };
  return { span: call, log };
}

engineTest(
  "activity, top-tools and cost over per-day rollups answer as the raw rows do, as data arrives, is replaced and deleted, and as midnight passes",
  async (t) => {
    await using env = await startInsightsEnv({ retentionDays: 45 });
    const acme = await createOrg(env, "Acme");
    const globex = await createOrg(env, "Globex");
    // Model calls only, on days retention (45 days) deletes: no tool call's tombstone notes them.
    const initech = await createOrg(env, "Initech");
    const now = Date.now();
    // The checked replica's today starts three days ago: its rollups stop there, and
    // the days since are read from raw rows, until its clock moves on (last step).
    let clock = now - 3 * DAY;
    const open = () =>
      Replica.open({
        path: `${env.dir}/days-check.duckdb`,
        source: env.stores.replicaSource,
        quiet: true,
        now: () => clock,
      });
    let replica = await open();
    try {
      // Globex holds the same session ids as Acme (prefix "s"), with other calls.
      const big = generateTelemetry({ seed: 31, sessions: 500, days: 100, now, variety: 60 });
      const small = generateTelemetry({ seed: 32, sessions: 200, days: 100, now });
      const sessionsOf = (data: typeof big) =>
        [
          ...new Set(
            data.batches.flat().map((event) => event.sessionId).filter((id) => id !== undefined),
          ),
        ] as string[];
      const modelsOnly = Array.from(
        { length: 40 },
        (_, i) => modelCall(`m${i % 7}`, `initech-${i}`, now - (40 + i) * DAY - i * HOUR, i),
      );
      const orgs = [
        { orgId: acme.orgId, variants: variants(sessionsOf(big), 1) },
        { orgId: globex.orgId, variants: variants(sessionsOf(small), 2) },
        { orgId: initech.orgId, variants: variants(["m0", "m1", "m2", "m3", "m4", "m5", "m6"], 3) },
      ];
      const check = async (label: string) => {
        await replica.catchUp();
        const rolledUp = await assertDaysMatchRaw(replica, orgs, now, label);
        assert.ok(rolledUp > 100, `${label}: ${rolledUp} answers read whole days from rollups`);
      };
      const half = Math.ceil(big.batches.length / 2);

      await t.step(
        "a first half of the data, on a replica that rolled its days up empty",
        async () => {
          await replica.catchUp();
          assert.equal(replica.daysThrough, midnight(clock));
          await ingest(env, acme, big.batches.slice(0, half));
          await ingest(env, globex, small.batches);
          await ingest(env, initech, [modelsOnly]);
          await check("first half");
          await assertServerMatchesReference(env, [acme, globex]);
        },
      );

      await t.step(
        "the rest arrives after a first answer; results replace stored rejects",
        async () => {
          await ingest(env, acme, big.batches.slice(half));
          await ingest(env, acme, [big.laterResults]);
          await ingest(env, globex, [small.laterResults]);
          await check("after the rest");
          await assertServerMatchesReference(env, [acme, globex]);
        },
      );

      await t.step(
        "logs replace their calls' spans across midnight; calls on both sides of midnight",
        async () => {
          const day = midnight(now) - 20 * DAY;
          const moves = [
            spanThenLog("s00001", "span-1", day - 500, day + 500),
            spanThenLog("s00002", "span-2", day + 2 * HOUR, day + 2 * HOUR + 10),
            spanThenLog("s00003", "span-3", day - 9 * DAY + 1, day - 9 * DAY - 1),
          ];
          for (const org of [acme, globex]) {
            await ingest(env, org, [moves.map((move) => move.span)]);
          }
          await check("spans stored");
          for (const org of [acme, globex]) {
            await ingest(env, org, [moves.map((move) => move.log)]);
          }
          await check("logs replaced the spans");
          // Rolled up by a catch-up (days before the mark), then when midnight passes (the others).
          const edges = [
            day,
            day - 10 * DAY,
            midnight(clock),
            midnight(clock) + DAY,
            midnight(now),
          ];
          await ingest(env, acme, [edgeCalls("a", edges)]);
          await ingest(env, globex, [edgeCalls("g", edges)]);
          await check("calls at midnight and a millisecond before");
          await assertServerMatchesReference(env, [acme, globex]);
        },
      );

      await t.step("retention deletes the oldest rows (tombstones)", async () => {
        const removed = await env.stores.writer!.runRetention();
        assert.ok(removed.toolCalls > 0, `retention removed calls: ${JSON.stringify(removed)}`);
        await check("after retention");
        await assertServerMatchesReference(env, [acme, globex]);
      });

      await t.step("after a restart, the rollups reach as far as they did", async () => {
        const through = replica.daysThrough;
        await replica.close();
        replica = await open();
        assert.equal(replica.daysThrough, through);
        await check("reopened");
      });

      await t.step("midnight passes: the days since are rolled up", async () => {
        const added = async () => {
          const [rows] = await replica.read(
            [{ sql: "SELECT count(*) AS n FROM added_days", params: {} }],
            Date.now() + 60_000,
          );
          return Number(rows?.[0]?.n);
        };
        // Late rows (calls of days already rolled up) added their aggregates. PostgreSQL's
        // source tells no copied row as new: there a late row's day is recomputed instead.
        if (testEngine() === "sqlite") assert.ok(await added() > 0, "days with added rows");
        const before = replica.daysThrough;
        clock = now;
        await replica.catchUp();
        assert.equal(replica.daysThrough, midnight(now));
        assert.ok(replica.daysThrough > before);
        // Recomputed with the advance: one row per key again.
        const [extra] = await replica.read([{
          sql: "SELECT (SELECT count(*) FROM activity_days) - (SELECT count(*) FROM " +
            "(SELECT DISTINCT org_id, day, session_id, actor_id, agent_system FROM activity_days)) " +
            "AS extra",
          params: {},
        }], Date.now() + 60_000);
        assert.equal(Number(extra?.[0]?.extra), 0);
        assert.equal(await added(), 0, "every day with added rows recomputed");
        await check("after midnight");
      });
    } finally {
      await replica.close();
    }
  },
);
