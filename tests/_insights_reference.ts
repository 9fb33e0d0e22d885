/**
 * Test support for the insight endpoints: a plain TypeScript reference
 * implementation of every insight over raw rows read back from
 * `telemetry.db`, a seeded generator of telemetry events, and a real query
 * server over a temporary data directory with the analytics service wired in.
 *
 * @module
 */
import { roundStat, roundUsd } from "../src/round.ts";
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { type Analytics, openAnalytics } from "../src/analytics/mod.ts";
import { ServiceMetrics } from "../src/http/metrics.ts";
import { ActorNames } from "../src/api/actor_names.ts";
import { insightRoutes } from "../src/api/insights.ts";
import { createQueryApp } from "../src/server/query_app.ts";
import { systemClock } from "../src/time.ts";
import type {
  DecisionEvent,
  ModelCallEvent,
  TelemetryEvent,
  ToolCallEvent,
} from "../src/model/telemetry.ts";
import { resolveServeConfig } from "../src/config.ts";
import { dataPaths } from "../src/store/sqlite/data_dir.ts";
import { openStores, type Stores } from "../src/store/open_stores.ts";
import { testDatabase } from "./_harness.ts";
import { lineChanges } from "../src/analytics/file_changes.ts";
import { intervalDeltas } from "../src/ingest/metrics/deltas.ts";
import { connectPostgres } from "../src/store/postgres/client.ts";

const DAY = 86_400_000;

// ---------------------------------------------------------------------------
// Raw rows and the reference implementation
// ---------------------------------------------------------------------------

/** Rows of `telemetry.db` as a plain SELECT returns them. */
export interface RawRows {
  toolCalls: {
    id: string;
    org_id: string;
    session_id: string;
    ts: number;
    tool_name: string;
    tool_type: string;
    outcome: string;
    duration_ms: number | null;
    agent_system: string;
    model: string | null;
    actor_id: string;
  }[];
  modelCalls: {
    org_id: string;
    session_id: string;
    actor_id: string;
    agent_system: string;
    ts: number;
    provider_name: string;
    model: string;
    input_tokens: number;
    output_tokens: number;
    cache_read_tokens: number;
    cache_creation_tokens: number;
    cost_usd: number | null;
    estimated_cost_usd: number | null;
  }[];
  riskFlags: {
    call_id: string;
    org_id: string;
    session_id: string;
    ts: number;
    flag: string;
    tool_name: string;
  }[];
  domainHits: {
    call_id: string;
    org_id: string;
    session_id: string;
    ts: number;
    domain: string;
    scheme: string;
  }[];
}

/** Reads every telemetry row back with plain SELECTs (no filtering in SQL). */
export function readRawRows(telemetryPath: string): RawRows {
  const db = new DatabaseSync(telemetryPath, { readOnly: true });
  try {
    const all = <T>(sql: string) => db.prepare(sql).all() as unknown as T;
    return {
      toolCalls: all("SELECT * FROM tool_calls"),
      modelCalls: all("SELECT * FROM model_calls"),
      riskFlags: all("SELECT * FROM risk_flags"),
      domainHits: all("SELECT * FROM domain_hits"),
    };
  } finally {
    db.close();
  }
}

/** The raw rows of an environment's store, on either engine, through its reader. */
export async function readStoredRows(env: InsightsEnv): Promise<RawRows> {
  const tables = ["tool_calls", "model_calls", "risk_flags", "domain_hits"];
  const [toolCalls, modelCalls, riskFlags, domainHits] = await env.stores.reader.read(
    tables.map((table) => ({ sql: `SELECT * FROM ${table}`, params: [] })),
  );
  return { toolCalls, modelCalls, riskFlags, domainHits } as unknown as RawRows;
}

/** A window as the reference needs it. */
export interface ReferenceWindow {
  window: string;
  granularity: "daily" | "weekly";
  start: number;
  end: number;
}

/** The window an insight response reports. */
export function windowOf(body: { window: Record<string, string> }): ReferenceWindow {
  return {
    window: body.window.window!,
    granularity: body.window.granularity as "daily" | "weekly",
    start: Date.parse(body.window.start!),
    end: Date.parse(body.window.end!),
  };
}

/** Orders strings by Unicode code point (SQLite's BINARY collation on UTF-8). */
export function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** The start of the UTC day, or of the week from Sunday 00:00 UTC, holding `ts`. */
export function referenceBucket(ts: number, granularity: "daily" | "weekly"): number {
  const date = new Date(ts);
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  return granularity === "daily" ? midnight : midnight - date.getUTCDay() * DAY;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const k = key(row);
    const list = groups.get(k);
    if (list) list.push(row);
    else groups.set(k, [row]);
  }
  return groups;
}

function distinct<T>(rows: readonly T[], key: (row: T) => string): number {
  return new Set(rows.map(key)).size;
}

function sum<T>(rows: readonly T[], value: (row: T) => number): number {
  let total = 0;
  for (const row of rows) total += value(row);
  return total;
}

/** Continuous (linearly interpolated) quantile of numbers. */
export function quantileCont(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const position = q * (sorted.length - 1);
  const lo = Math.floor(position);
  const hi = Math.ceil(position);
  return sorted[lo]! + (position - lo) * (sorted[hi]! - sorted[lo]!);
}

/**
 * Computes one insight's body from raw rows, the way docs/api.md §4.9–4.14 and docs/design.md §6
 * define it.
 */
export function referenceInsight(
  raw: RawRows,
  name: string,
  orgId: string,
  window: ReferenceWindow,
): Record<string, unknown> {
  const inWindow = <T extends { org_id: string; ts: number }>(rows: readonly T[]) =>
    rows.filter((row) => row.org_id === orgId && row.ts >= window.start && row.ts < window.end);
  const bucketed = <T extends { ts: number }>(rows: readonly T[]) =>
    [...groupBy(rows, (row) => String(referenceBucket(row.ts, window.granularity)))]
      .map(([bucket, list]) => ({ bucket: Number(bucket), list }))
      .sort((a, b) => a.bucket - b.bucket);
  const envelope = {
    window: {
      window: window.window,
      granularity: window.granularity,
      start: iso(window.start),
      end: iso(window.end),
    },
  };
  const calls = inWindow(raw.toolCalls);
  const errors = (rows: typeof calls) => rows.filter((row) => row.outcome === "error").length;
  switch (name) {
    case "activity":
      return {
        ...envelope,
        summary: {
          "total_calls": calls.length,
          "error_count": errors(calls),
          "session_count": distinct(calls, (row) => row.session_id),
        },
        series: bucketed(calls).map(({ bucket, list }) => ({
          bucket: iso(bucket),
          calls: list.length,
          errors: errors(list),
        })),
        breakdown: null,
      };
    case "top-tools": {
      const rows = [...groupBy(calls, (row) => JSON.stringify([row.tool_name, row.tool_type]))]
        .map(([, list]) => {
          const durations = list.filter((row) => row.duration_ms !== null);
          return {
            "tool_name": list[0]!.tool_name,
            "tool_type": list[0]!.tool_type,
            calls: list.length,
            errors: errors(list),
            "avg_duration_ms": durations.length === 0
              ? null
              : roundStat(sum(durations, (row) => row.duration_ms!) / durations.length),
          };
        })
        .sort((a, b) =>
          b.calls - a.calls || byCodePoint(a.tool_name, b.tool_name) ||
          byCodePoint(a.tool_type, b.tool_type)
        );
      return {
        ...envelope,
        summary: {
          "total_calls": calls.length,
          "unique_tools": distinct(calls, (row) => row.tool_name),
        },
        series: null,
        breakdown: rows.slice(0, 50),
      };
    }
    case "outliers": {
      const sessions = [...groupBy(calls, (row) => row.session_id)];
      const p95 = quantileCont(sessions.map(([, list]) => list.length), 0.95);
      const latest = (list: typeof calls) =>
        list.reduce<(typeof calls)[number] | null>(
          (best, row) =>
            best === null || row.ts > best.ts ||
              (row.ts === best.ts && byCodePoint(row.id, best.id) > 0)
              ? row
              : best,
          null,
        );
      const outliers = sessions
        .filter(([, list]) => p95 !== null && list.length > p95)
        .sort(([a, x], [b, y]) => y.length - x.length || byCodePoint(a, b));
      return {
        ...envelope,
        summary: {
          "p95_call_count": roundStat(p95 ?? 0),
          "outlier_count": outliers.length,
          "session_count": sessions.length,
        },
        series: null,
        breakdown: outliers.slice(0, 50).map(([sessionId, list]) => ({
          "session_id": sessionId,
          "call_count": list.length,
          "first_seen": iso(Math.min(...list.map((row) => row.ts))),
          "last_seen": iso(Math.max(...list.map((row) => row.ts))),
          "agent_system": latest(list)!.agent_system,
          model: latest(list.filter((row) => row.model !== null && row.model !== ""))?.model ?? "",
          "error_count": errors(list),
        })),
      };
    }
    case "cost": {
      const modelCalls = inWindow(raw.modelCalls);
      const cost = (rows: typeof modelCalls) => roundUsd(sum(rows, (row) => row.cost_usd ?? 0));
      const estimate = (rows: typeof modelCalls) =>
        roundUsd(sum(rows, (row) => row.estimated_cost_usd ?? 0));
      const breakdown = [
        ...groupBy(
          modelCalls.filter((row) => row.model !== ""),
          (row) => JSON.stringify([row.provider_name, row.model]),
        ),
      ].map(([, list]) => ({
        "provider_name": list[0]!.provider_name,
        model: list[0]!.model,
        "input_tokens": sum(list, (row) => row.input_tokens),
        "output_tokens": sum(list, (row) => row.output_tokens),
        "cost_usd": cost(list),
        "estimated_cost_usd": estimate(list),
        "call_count": list.length,
      })).sort((a, b) =>
        b.input_tokens + b.output_tokens - (a.input_tokens + a.output_tokens) ||
        byCodePoint(a.provider_name, b.provider_name) || byCodePoint(a.model, b.model)
      );
      return {
        ...envelope,
        summary: {
          "input_tokens": sum(modelCalls, (row) => row.input_tokens),
          "output_tokens": sum(modelCalls, (row) => row.output_tokens),
          "cache_read_tokens": sum(modelCalls, (row) => row.cache_read_tokens),
          "cache_creation_tokens": sum(modelCalls, (row) => row.cache_creation_tokens),
          "cost_usd": cost(modelCalls),
          "cost_available": modelCalls.some((row) => row.cost_usd !== null),
          "estimated_cost_usd": estimate(modelCalls),
          "call_count": modelCalls.length,
        },
        series: bucketed(modelCalls).map(({ bucket, list }) => ({
          bucket: iso(bucket),
          "input_tokens": sum(list, (row) => row.input_tokens),
          "output_tokens": sum(list, (row) => row.output_tokens),
          "cost_usd": cost(list),
          "estimated_cost_usd": estimate(list),
        })),
        breakdown: breakdown.slice(0, 50),
      };
    }
    case "risk": {
      const flags = inWindow(raw.riskFlags);
      return {
        ...envelope,
        summary: {
          "total_flags": flags.length,
          "sessions_flagged": distinct(flags, (row) => row.session_id),
          "distinct_flag_kinds": distinct(flags, (row) => row.flag),
        },
        series: bucketed(flags).flatMap(({ bucket, list }) =>
          [...groupBy(list, (row) => row.flag)]
            .sort(([a], [b]) => byCodePoint(a, b))
            .map(([flag, rows]) => ({ bucket: iso(bucket), flag, flags: rows.length }))
        ),
        breakdown: [...groupBy(flags, (row) => row.flag)]
          .map(([flag, list]) => ({
            flag,
            flags: list.length,
            sessions: distinct(list, (row) => row.session_id),
            tools: distinct(list, (row) => row.tool_name),
          }))
          .sort((a, b) => b.flags - a.flags || byCodePoint(a.flag, b.flag))
          .slice(0, 50),
      };
    }
    case "domains": {
      const hits = inWindow(raw.domainHits);
      return {
        ...envelope,
        summary: {
          "total_hits": hits.length,
          "unique_domains": distinct(hits, (row) => row.domain),
          sessions: distinct(hits, (row) => row.session_id),
        },
        series: bucketed(hits).map(({ bucket, list }) => ({
          bucket: iso(bucket),
          hits: list.length,
          "unique_domains": distinct(list, (row) => row.domain),
        })),
        breakdown: [...groupBy(hits, (row) => JSON.stringify([row.domain, row.scheme]))]
          .map(([, list]) => ({
            domain: list[0]!.domain,
            scheme: list[0]!.scheme,
            hits: list.length,
            sessions: distinct(list, (row) => row.session_id),
          }))
          .sort((a, b) =>
            b.hits - a.hits || byCodePoint(a.domain, b.domain) || byCodePoint(a.scheme, b.scheme)
          )
          .slice(0, 50),
      };
    }
  }
  throw new Error(`Unknown insight: "${name}"`);
}

/** How rows are grouped: `actor`, `agent`, or `dim.<key>` with each session's value of the key. */
export interface ReferenceGrouping {
  by: string;
  /** For `dim.<key>`: the sessions that hold the key, and their value. */
  dimension?: ReadonlyMap<string, string>;
}

/** The table whose rows make an insight's groups, and what orders them (docs/api.md §4.23). */
const GROUPED: Record<
  string,
  { table: keyof RawRows; headline: (summary: Record<string, unknown>) => number }
> = {
  "activity": { table: "toolCalls", headline: (summary) => Number(summary.total_calls) },
  "top-tools": { table: "toolCalls", headline: (summary) => Number(summary.total_calls) },
  "outliers": { table: "toolCalls", headline: (summary) => Number(summary.session_count) },
  "cost": {
    table: "modelCalls",
    headline: (summary) => Number(summary.input_tokens) + Number(summary.output_tokens),
  },
  "risk": { table: "riskFlags", headline: (summary) => Number(summary.total_flags) },
  "domains": { table: "domainHits", headline: (summary) => Number(summary.total_hits) },
};

/** Groups ordered as docs/api.md §4.23 says: biggest first, ties by value, the null group last. */
export function orderGroups<T extends { value: string | null }>(
  groups: T[],
  headline: (group: T) => number,
): T[] {
  return groups.sort((a, b) =>
    headline(b) - headline(a) ||
    (a.value === null
      ? (b.value === null ? 0 : 1)
      : b.value === null
      ? -1
      : byCodePoint(a.value, b.value))
  );
}

/** The groups of an ordered list as the envelope carries them: at most 100, and whether more. */
function cappedGroups<T>(by: string, groups: T[]) {
  return { group_by: by, groups: groups.slice(0, 100), groups_truncated: groups.length > 100 };
}

/**
 * One of the spec's insights with `group_by` (docs/api.md §4.23): its body
 * with `group_by`, `groups` and `groups_truncated`, each group's summary the
 * insight's over that group's rows only (a flag or hit belongs to its tool
 * call's actor and agent).
 */
export function referenceGroupedInsight(
  raw: RawRows,
  name: string,
  orgId: string,
  window: ReferenceWindow,
  grouping: ReferenceGrouping,
): Record<string, unknown> {
  const calls = new Map(raw.toolCalls.map((row) => [`${row.org_id}\u0000${row.id}`, row]));
  const owner = (
    row: { org_id: string; call_id?: string; actor_id?: string; agent_system?: string },
  ) => row.call_id === undefined ? row : calls.get(`${row.org_id}\u0000${row.call_id}`);
  const valueOf = (row: {
    org_id: string;
    session_id: string;
    call_id?: string;
    actor_id?: string;
    agent_system?: string;
  }): string | null => {
    if (grouping.by === "actor") return owner(row)?.actor_id || null;
    if (grouping.by === "agent") return owner(row)?.agent_system || null;
    return grouping.dimension!.get(row.session_id) ?? null;
  };
  const { table, headline } = GROUPED[name]!;
  const mine = (raw[table] as { org_id: string; ts: number; session_id: string }[])
    .filter((row) => row.org_id === orgId && row.ts >= window.start && row.ts < window.end);
  const values = [...new Set(mine.map((row) => valueOf(row)))];
  const only = (value: string | null): RawRows => {
    const keep = <T extends { org_id: string; session_id: string }>(rows: readonly T[]) =>
      rows.filter((row) => row.org_id === orgId && valueOf(row) === value);
    return {
      toolCalls: keep(raw.toolCalls),
      modelCalls: keep(raw.modelCalls),
      riskFlags: keep(raw.riskFlags),
      domainHits: keep(raw.domainHits),
    };
  };
  const groups = orderGroups(
    values.map((value) => ({
      value,
      summary: referenceInsight(only(value), name, orgId, window).summary as Record<
        string,
        unknown
      >,
    })),
    (group) => headline(group.summary),
  );
  return { ...referenceInsight(raw, name, orgId, window), ...cappedGroups(grouping.by, groups) };
}

/**
 * Deep equality where numbers may differ by 1e-9 relative to their size (sums
 * of costs and averages add up in another order in DuckDB).
 */
export function assertInsightEqual(actual: unknown, expected: unknown, path = "body"): void {
  if (typeof expected === "number" && typeof actual === "number") {
    const scale = Math.max(1, Math.abs(expected), Math.abs(actual));
    assert.ok(
      Math.abs(actual - expected) <= 1e-9 * scale,
      `${path}: ${actual} differs from ${expected}`,
    );
    return;
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected an array, got ${JSON.stringify(actual)}`);
    assert.equal(actual.length, expected.length, `${path}: length`);
    expected.forEach((item, i) => assertInsightEqual(actual[i], item, `${path}[${i}]`));
    return;
  }
  if (expected !== null && typeof expected === "object") {
    assert.ok(actual !== null && typeof actual === "object", `${path}: expected an object`);
    assert.deepEqual(
      Object.keys(actual as object),
      Object.keys(expected),
      `${path}: field names and order`,
    );
    for (const [key, value] of Object.entries(expected)) {
      assertInsightEqual((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
    }
    return;
  }
  assert.equal(actual, expected, path);
}

// ---------------------------------------------------------------------------
// Seeded telemetry
// ---------------------------------------------------------------------------

/** A small seeded PRNG (mulberry32): the same seed gives the same telemetry. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What to generate. */
export interface TelemetryPlan {
  seed: number;
  sessions: number;
  /** Times fall in (now - days, now]. */
  days: number;
  now: number;
  /** Distinct MCP tools, hosts and models to draw from (above 50 exercises the breakdown limit). */
  variety?: number;
  /** Prefix of session ids, so two plans do not collide. */
  prefix?: string;
}

/** Events in ingest batches, plus the rejects that a later batch turns into results. */
export interface GeneratedTelemetry {
  batches: TelemetryEvent[][];
  /** Results for calls first stored as rejected: ingest them later to exercise tombstones. */
  laterResults: TelemetryEvent[];
}

const AGENTS = ["claude-code", "codex", "gemini-cli"];
const PROVIDERS = ["anthropic", "openai", ""];

/**
 * Random tool calls (ok/error/rejected, builtin and MCP, some with a model and
 * risky or URL-bearing arguments) and model calls (with and without cost and
 * model) spread over the last `days` days.
 */
export function generateTelemetry(plan: TelemetryPlan): GeneratedTelemetry {
  const random = seededRandom(plan.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const variety = plan.variety ?? 12;
  const prefix = plan.prefix ?? "s";
  const batches: TelemetryEvent[][] = [];
  const laterResults: TelemetryEvent[] = [];
  let batch: TelemetryEvent[] = [];
  const push = (event: TelemetryEvent) => {
    batch.push(event);
    if (batch.length >= 400) {
      batches.push(batch);
      batch = [];
    }
  };
  for (let s = 0; s < plan.sessions; s++) {
    const sessionId = `${prefix}${String(s).padStart(5, "0")}`;
    const agentSystem = pick(AGENTS);
    const start = plan.now - random() * plan.days * DAY;
    // Heavy tail: most sessions are short, a few very long.
    const callCount = random() < 0.06
      ? 20 + Math.floor(random() * 60)
      : 1 + Math.floor(random() * 8);
    const sessionModel = random() < 0.5 ? `model-${Math.floor(random() * variety)}` : undefined;
    const base = {
      sessionId,
      agentSystem,
      agentVersion: "1.0.0",
      source: "otlp_logs" as const,
    };
    for (let c = 0; c < callCount; c++) {
      const timeMs = Math.min(plan.now - 1, Math.floor(start + random() * 6 * 3_600_000));
      const toolCallId = `${sessionId}-call-${c}`;
      const { toolName, toolType, category, args } = randomTool(random, variety);
      const roll = random();
      const outcome = toolName === "Deploy" || roll < 0.15
        ? "rejected"
        : roll < 0.3
        ? "error"
        : "ok";
      if (outcome === "rejected" && random() < 0.5) {
        // A rejected decision now; sometimes its result arrives in a later batch.
        const decision: DecisionEvent = {
          ...base,
          kind: "decision",
          timeMs,
          identity: toolCallId,
          toolName,
          toolType,
          category,
          toolCallId,
          decision: "reject",
          rejects: true,
          arguments: args,
        };
        push(decision);
        if (toolName !== "Deploy" && random() < 0.5) {
          const late: ToolCallEvent = {
            ...base,
            kind: "tool_call",
            timeMs: Math.min(plan.now - 1, timeMs + 1000),
            identity: toolCallId,
            toolName,
            toolType,
            category,
            outcome: random() < 0.5 ? "ok" : "error",
            durationMs: Math.floor(random() * 5000),
            resultSizeBytes: 10,
            toolCallId,
            // The result's arguments differ: its flags and domains replace the reject's.
            arguments: randomTool(random, variety).args,
            ...(sessionModel && random() < 0.5 ? { model: sessionModel } : {}),
          };
          laterResults.push(late);
        }
        continue;
      }
      const call: ToolCallEvent = {
        ...base,
        kind: "tool_call",
        timeMs,
        identity: toolCallId,
        toolName,
        toolType,
        category,
        outcome,
        durationMs: outcome === "rejected" ? null : Math.floor(random() * 5000),
        resultSizeBytes: outcome === "rejected" ? null : Math.floor(random() * 1000),
        toolCallId,
        arguments: args,
        ...(sessionModel && random() < 0.6 ? { model: sessionModel } : {}),
      };
      push(call);
      if (random() < 0.5) {
        push(randomModelCall(random, base, `${toolCallId}-model`, timeMs, variety));
      }
    }
  }
  if (batch.length > 0) batches.push(batch);
  return { batches, laterResults };
}

function randomTool(random: () => number, variety: number) {
  const r = random();
  const host = `h${Math.floor(random() * variety)}.example.${random() < 0.5 ? "com" : "org"}`;
  const bashCommands = [
    "ls -la",
    "npm test",
    `curl -s https://${host}/api`,
    `wget http://${host}/file.tgz`,
    "rm -rf ./build /tmp/cache",
    "git push --force origin main",
    "cat ~/.ssh/id_rsa",
    `curl https://${host}/a && curl https://${host}/b`,
  ];
  if (r < 0.35) {
    const command = bashCommands[Math.floor(random() * bashCommands.length)]!;
    return {
      toolName: "Bash",
      toolType: "builtin" as const,
      category: "code_exec" as const,
      args: JSON.stringify({ command }),
    };
  }
  if (r < 0.5) {
    const path = random() < 0.3 ? "/app/.env" : "/app/src/main.ts";
    return {
      toolName: "Read",
      toolType: "builtin" as const,
      category: "file_read" as const,
      args: JSON.stringify({ "file_path": path }),
    };
  }
  if (r < 0.6) {
    return {
      toolName: "Edit",
      toolType: "builtin" as const,
      category: "file_write" as const,
      args: JSON.stringify({ "file_path": "/app/src/x.ts", "old_string": "a", "new_string": "b" }),
    };
  }
  if (r < 0.7) {
    return {
      toolName: "WebFetch",
      toolType: "builtin" as const,
      category: "web_fetch" as const,
      args: JSON.stringify({ url: `https://${host}/docs` }),
    };
  }
  if (r < 0.73) {
    return {
      toolName: "Deploy",
      toolType: "builtin" as const,
      category: "other" as const,
      args: JSON.stringify({ target: "production" }),
    };
  }
  const n = Math.floor(random() * variety);
  return {
    toolName: `mcp__srv${n % 7}__tool${n}`,
    toolType: "mcp" as const,
    category: "mcp" as const,
    args: JSON.stringify({ url: `https://${host}/mcp`, query: "x" }),
  };
}

/** No model, a priced one (the price table estimates it when no cost is reported) or another. */
function modelName(random: () => number, variety: number): string {
  const roll = random();
  if (roll < 0.15) return "";
  if (roll < 0.35) return PRICED_MODELS[Math.floor(random() * PRICED_MODELS.length)]!;
  return `model-${Math.floor(random() * variety)}`;
}

const PRICED_MODELS = ["claude-sonnet-4-5-20250929", "gpt-5.5", "gemini-2.5-pro"];

function randomModelCall(
  random: () => number,
  base: { sessionId: string; agentSystem: string; agentVersion: string },
  identity: string,
  timeMs: number,
  variety: number,
): ModelCallEvent {
  const costRoll = random();
  return {
    ...base,
    kind: "model_call",
    timeMs,
    identity,
    providerName: PROVIDERS[Math.floor(random() * PROVIDERS.length)]!,
    model: modelName(random, variety),
    inputTokens: Math.floor(random() * 20_000),
    outputTokens: Math.floor(random() * 4_000),
    cacheReadTokens: Math.floor(random() * 50_000),
    cacheCreationTokens: Math.floor(random() * 2_000),
    costUsd: costRoll < 0.4 ? null : costRoll < 0.45 ? 0 : Math.round(random() * 1e6) / 1e7,
    durationMs: Math.floor(random() * 3000),
  };
}

// ---------------------------------------------------------------------------
// A query server with insights over a temporary data directory
// ---------------------------------------------------------------------------

/** An organization with an API key and an actor to ingest as. */
export interface InsightsOrg {
  orgId: string;
  actorId: string;
  apiKey: string;
}

/** A running query server with the analytics service. */
export interface InsightsEnv extends AsyncDisposable {
  dir: string;
  stores: Stores;
  /** `telemetry.db` on the embedded store (null on PostgreSQL), for reading raw rows. */
  telemetryPath: string | null;
  analytics: Analytics;
  url: string;
  createOrg(name: string): Promise<InsightsOrg>;
  ingest(org: InsightsOrg, events: readonly TelemetryEvent[]): Promise<void>;
  // deno-lint-ignore no-explicit-any
  get(path: string, key: string): Promise<{ status: number; body: any }>;
  /**
   * Closes the analytics service, runs `beforeOpen` (e.g. to damage the
   * replica file) and opens it again over the same files.
   */
  reopenAnalytics(
    options?: { timeoutMs?: number; beforeOpen?: () => Promise<void> | void },
  ): Promise<Analytics>;
  close(): Promise<void>;
}

/** Starts a query server on 127.0.0.1 over a fresh temporary data directory. */
export async function startInsightsEnv(
  options: { timeoutMs?: number; retentionDays?: number; edgeHorizonMs?: number } = {},
): Promise<InsightsEnv> {
  const dir = await Deno.makeTempDir({ prefix: "agent-telemetry-insights-" });
  const database = await testDatabase();
  const timeoutMs = options.timeoutMs ?? 30_000;
  const config = resolveServeConfig({
    data: dir,
    readerThreads: "1",
    queryTimeoutMs: String(timeoutMs),
    ...(database === null ? {} : { database: database.url }),
  }, () => undefined);
  // Shorter than `serve` allows, to test what retention does to insights.
  const stores = await openStores({ ...config, retentionDays: options.retentionDays ?? 400 });
  const reader = stores.reader;
  const open = (timeout: number) =>
    openAnalytics({
      path: dataPaths(dir).analytics,
      source: stores.replicaSource,
      timeoutMs: timeout,
      quiet: true,
      store: stores.engine === "sqlite" ? reader : undefined,
      edgeHorizonMs: options.edgeHorizonMs,
    });
  let analytics = await open(timeoutMs);
  const errors: unknown[] = [];
  const cursorSecret = await stores.keys.cursorSecret();
  const app = () =>
    createQueryApp({
      keys: stores.keys,
      reader,
      version: "test",
      cursorSecret,
      actorNames: new ActorNames(stores.keys),
      clock: systemClock,
      metrics: new ServiceMetrics(),
      readiness: () => Promise.resolve(),
      logError: (error) => {
        errors.push(error);
      },
      routes: insightRoutes(analytics),
    });
  let handler = app();
  const { promise: listening, resolve } = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: (addr) => resolve(addr as Deno.NetAddr) },
    (request) => handler(request),
  );
  const addr = await listening;
  const url = `http://127.0.0.1:${addr.port}`;
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await server.shutdown();
    await analytics.close();
    await stores.close();
    await database?.drop();
    await Deno.remove(dir, { recursive: true });
  };
  return {
    dir,
    stores,
    telemetryPath: stores.replicaSource.engine === "sqlite" ? stores.replicaSource.path : null,
    get analytics() {
      return analytics;
    },
    url,
    async createOrg(name) {
      const keys = stores.keys;
      const org = await keys.createOrg(name);
      const member = await keys.addMember(org.id, `admin@${name.toLowerCase()}.test`);
      const key = await keys.createKey(org.id, member.id, "test");
      const actor = await keys.createActor(org.id, "dev");
      return { orgId: org.id, actorId: actor.actor_id, apiKey: key.key };
    },
    async ingest(org, events) {
      await stores.writer!.ingest({ orgId: org.orgId, actorId: org.actorId }, [...events]);
    },
    async get(path, key) {
      const response = await fetch(url + path, { headers: { authorization: `Bearer ${key}` } });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Plain-text replies stay text.
      }
      if (response.status === 500) assert.deepEqual(errors.splice(0), [], "unexpected errors");
      return { status: response.status, body };
    },
    async reopenAnalytics(reopen = {}) {
      await analytics.close();
      await reopen.beforeOpen?.();
      analytics = await open(reopen.timeoutMs ?? timeoutMs);
      handler = app();
      return analytics;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

// ---------------------------------------------------------------------------
// Productivity (issue #18): a reference over the store's raw rows
// ---------------------------------------------------------------------------

/** The rows productivity reads, as a plain SELECT returns them (times as decimal text). */
export interface ProductivityRows {
  points: {
    org_id: string;
    actor_id: string;
    agent_system: string;
    session_id: string;
    measure: string;
    type: string;
    tool: string;
    decision: string;
    language: string;
    temporality: string;
    monotonic: number;
    series_id: string;
    start_time_ns: string | null;
    time_ns: string;
    ts: number;
    value: number;
  }[];
  toolCalls: {
    org_id: string;
    actor_id: string;
    agent_system: string;
    session_id: string;
    ts: number;
    tool_name: string;
    category: string;
    arguments: string | null;
  }[];
  modelCalls: {
    org_id: string;
    actor_id: string;
    agent_system: string;
    session_id: string;
    ts: number;
    cost_usd: number | null;
    estimated_cost_usd: number | null;
  }[];
}

const PRODUCTIVITY_SELECTS = {
  points: `SELECT org_id, actor_id, agent_system, session_id, measure, type, tool, decision,
      language, temporality, monotonic, series_id, CAST(start_time_ns AS TEXT) AS start_time_ns,
      CAST(time_ns AS TEXT) AS time_ns, ts, value FROM metric_points`,
  toolCalls: `SELECT org_id, actor_id, agent_system, session_id, ts, tool_name, category,
      arguments FROM tool_calls`,
  modelCalls:
    "SELECT org_id, actor_id, agent_system, session_id, ts, cost_usd, estimated_cost_usd FROM model_calls",
};

/** Every row productivity reads, from a test server's store (either engine). */
export async function readProductivityRows(
  server: { dir: string; database: string | null },
): Promise<ProductivityRows> {
  const out: Record<string, unknown[]> = {};
  if (server.database === null) {
    const db = new DatabaseSync(dataPaths(server.dir).telemetry, { readOnly: true });
    try {
      for (const [key, sql] of Object.entries(PRODUCTIVITY_SELECTS)) {
        out[key] = db.prepare(sql).all();
      }
    } finally {
      db.close();
    }
  } else {
    const sql = connectPostgres(server.database, { max: 1 });
    try {
      for (const [key, text] of Object.entries(PRODUCTIVITY_SELECTS)) {
        out[key] = (await sql.unsafe(text)).map((row) => {
          const plain: Record<string, unknown> = { ...row };
          for (const column of ["ts", "value", "monotonic", "cost_usd"]) {
            if (plain[column] !== undefined && plain[column] !== null) {
              plain[column] = Number(plain[column]);
            }
          }
          return plain;
        });
      }
    } finally {
      await sql.end();
    }
  }
  return out as unknown as ProductivityRows;
}

/** What one metric point, tool call or model call adds to productivity's figures. */
interface ProductivityFact {
  ts: number;
  actorId: string;
  agent: string;
  sessionId: string;
  tool: string | null;
  language: string | null;
  activeUser: number | null;
  activeCli: number | null;
  linesAdded: number | null;
  linesRemoved: number | null;
  metricLines: boolean;
  derivedLines: boolean;
  commits: number | null;
  pullRequests: number | null;
  accepted: number | null;
  rejected: number | null;
  cost: number | null;
  estimate: number | null;
}

/**
 * `/v1/insights/productivity` computed from raw rows, as README's section
 * defines it. `names` gives each breakdown row's `actor_name`.
 */
export function referenceProductivity(
  raw: ProductivityRows,
  orgId: string,
  window: ReferenceWindow,
  filters: { actor?: string; team?: readonly string[] } = {},
  names: ReadonlyMap<string, string> = new Map(),
  grouping?: ReferenceGrouping,
): Record<string, unknown> {
  const chosen = (row: { org_id: string; actor_id: string }) =>
    row.org_id === orgId && (filters.actor === undefined || row.actor_id === filters.actor) &&
    (filters.team === undefined || filters.team.includes(row.actor_id));
  const inWindow = (ts: number) => ts >= window.start && ts < window.end;
  const sessionsWith = (measure: string) =>
    new Set(
      raw.points.filter((p) => p.org_id === orgId && p.measure === measure && p.session_id !== "")
        .map((p) => p.session_id),
    );
  const lineSessions = sessionsWith("lines");
  const costSessions = sessionsWith("cost_usd");

  const points = raw.points.filter((p) => chosen(p) && p.ts < window.end);
  const deltas = intervalDeltas(points.map((p) => ({
    seriesId: `${p.actor_id}\u0000${p.series_id}`,
    temporality: p.temporality as "delta" | "cumulative",
    monotonic: Number(p.monotonic) === 1,
    startTimeNs: p.start_time_ns === null ? null : BigInt(p.start_time_ns),
    timeNs: BigInt(p.time_ns),
    value: p.value,
  })));
  const facts: ProductivityFact[] = [];
  const blank = { tool: null, language: null, activeUser: null, activeCli: null };
  const none = {
    linesAdded: null,
    linesRemoved: null,
    metricLines: false,
    derivedLines: false,
    commits: null,
    pullRequests: null,
    accepted: null,
    rejected: null,
    cost: null,
    estimate: null,
  };
  points.forEach((p, i) => {
    if (!inWindow(p.ts)) return;
    const amount = deltas[i]!;
    const when = (measure: string, test = true) => p.measure === measure && test ? amount : null;
    const decision = p.measure === "edit_decisions";
    facts.push({
      ts: p.ts,
      actorId: p.actor_id,
      agent: p.agent_system,
      sessionId: p.session_id,
      tool: decision ? p.tool : null,
      language: decision ? p.language : null,
      activeUser: when("active_time_s", p.type === "user"),
      activeCli: when("active_time_s", p.type === "cli"),
      linesAdded: when("lines", p.type === "added"),
      linesRemoved: when("lines", p.type === "removed"),
      metricLines: p.measure === "lines",
      derivedLines: false,
      commits: when("commits"),
      pullRequests: when("pull_requests"),
      accepted: when("edit_decisions", p.decision === "accept"),
      rejected: when("edit_decisions", p.decision === "reject"),
      cost: when("cost_usd"),
      estimate: null,
    });
  });
  for (const call of raw.toolCalls) {
    if (!chosen(call) || !inWindow(call.ts)) continue;
    const changes = call.category === "file_write" && !lineSessions.has(call.session_id)
      ? lineChanges(call.tool_name, call.arguments)
      : null;
    facts.push({
      ts: call.ts,
      actorId: call.actor_id,
      agent: call.agent_system,
      sessionId: call.session_id,
      ...blank,
      ...none,
      linesAdded: changes?.added ?? null,
      linesRemoved: changes?.removed ?? null,
      derivedLines: changes !== null,
    });
  }
  for (const call of raw.modelCalls) {
    if (!chosen(call) || !inWindow(call.ts)) continue;
    facts.push({
      ts: call.ts,
      actorId: call.actor_id,
      agent: call.agent_system,
      sessionId: call.session_id,
      ...blank,
      ...none,
      cost: costSessions.has(call.session_id) ? null : call.cost_usd,
      estimate: costSessions.has(call.session_id) ? null : call.estimated_cost_usd,
    });
  }

  const total = (list: ProductivityFact[], pick: (fact: ProductivityFact) => number | null) => {
    const values = list.map(pick).filter((value): value is number => value !== null);
    return values.length === 0 ? null : sum(values, (value) => value);
  };
  const counts = (list: ProductivityFact[]) => {
    const cost = total(list, (f) => f.cost);
    const estimate = total(list, (f) => f.estimate);
    return {
      "sessions": new Set(list.map((f) => f.sessionId).filter((id) => id !== "")).size,
      "active_time_user_s": roundStat(total(list, (f) => f.activeUser) ?? 0),
      "active_time_cli_s": roundStat(total(list, (f) => f.activeCli) ?? 0),
      "lines_added": roundStat(total(list, (f) => f.linesAdded) ?? 0),
      "lines_removed": roundStat(total(list, (f) => f.linesRemoved) ?? 0),
      "commits": roundStat(total(list, (f) => f.commits) ?? 0),
      "pull_requests": roundStat(total(list, (f) => f.pullRequests) ?? 0),
      "edits_accepted": roundStat(total(list, (f) => f.accepted) ?? 0),
      "edits_rejected": roundStat(total(list, (f) => f.rejected) ?? 0),
      "cost_usd": cost === null ? null : roundUsd(cost),
      "estimated_cost_usd": estimate === null ? null : roundUsd(estimate),
    };
  };
  const withRatios = (list: ProductivityFact[]) => {
    const cost = total(list, (f) => f.cost);
    const accepted = total(list, (f) => f.accepted) ?? 0;
    const decided = accepted + (total(list, (f) => f.rejected) ?? 0);
    const lines = (total(list, (f) => f.linesAdded) ?? 0) +
      (total(list, (f) => f.linesRemoved) ?? 0);
    const commits = total(list, (f) => f.commits) ?? 0;
    const metric = list.some((f) => f.metricLines);
    const derived = list.some((f) => f.derivedLines);
    return {
      ...counts(list),
      "lines_source": metric && derived
        ? "mixed"
        : metric
        ? "metrics"
        : derived
        ? "tool_calls"
        : null,
      "acceptance_rate": decided === 0 ? null : roundStat(accepted / decided),
      "cost_per_1k_lines": cost === null || lines === 0 ? null : roundUsd(cost * 1000 / lines),
      "cost_per_commit": cost === null || commits === 0 ? null : roundUsd(cost / commits),
    };
  };
  const series = [...groupBy(facts, (f) => String(referenceBucket(f.ts, window.granularity)))]
    .map(([bucket, list]) => ({ bucket: Number(bucket), list }))
    .sort((a, b) => a.bucket - b.bucket)
    .map(({ bucket, list }) => ({ bucket: iso(bucket), ...counts(list) }));
  const breakdown = [...groupBy(facts, (f) => JSON.stringify([f.actorId, f.agent]))]
    .map(([key, list]) => {
      const [actorId, agent] = JSON.parse(key) as [string, string];
      const decisions = [
        ...groupBy(
          list.filter((f) => f.accepted !== null || f.rejected !== null),
          (f) => JSON.stringify([f.tool, f.language]),
        ),
      ].map(([toolKey, rows]) => {
        const [tool, language] = JSON.parse(toolKey) as [string, string];
        return {
          tool,
          language,
          accepted: roundStat(total(rows, (f) => f.accepted) ?? 0),
          rejected: roundStat(total(rows, (f) => f.rejected) ?? 0),
        };
      }).sort((a, b) => byCodePoint(a.tool, b.tool) || byCodePoint(a.language, b.language));
      return {
        "actor_id": actorId,
        "actor_name": names.get(actorId) ?? "",
        agent,
        ...withRatios(list),
        decisions,
      };
    })
    .sort((a, b) =>
      b.sessions - a.sessions || byCodePoint(a.actor_id, b.actor_id) ||
      byCodePoint(a.agent, b.agent)
    )
    .slice(0, 500);
  const body = {
    window: {
      window: window.window,
      granularity: window.granularity,
      start: iso(window.start),
      end: iso(window.end),
    },
    summary: withRatios(facts),
    series,
    breakdown,
  };
  if (grouping === undefined) return body;
  const valueOf = (fact: ProductivityFact): string | null =>
    grouping.by === "actor"
      ? fact.actorId || null
      : grouping.by === "agent"
      ? fact.agent || null
      : grouping.dimension!.get(fact.sessionId) ?? null;
  const groups = orderGroups(
    [...groupBy(facts, (fact) => JSON.stringify(valueOf(fact)))].map(([value, list]) => ({
      value: JSON.parse(value) as string | null,
      summary: withRatios(list),
    })),
    (group) => group.summary.sessions,
  );
  return { ...body, ...cappedGroups(grouping.by, groups) };
}

/** One finished Bash call in a session of its own, running `command`. */
export function bashCall(identity: string, timeMs: number, command = "ls"): ToolCallEvent {
  return {
    kind: "tool_call",
    sessionId: `session-${identity}`,
    identity,
    timeMs,
    agentSystem: "claude-code",
    agentVersion: "2.1.0",
    toolName: "Bash",
    toolType: "builtin",
    category: "code_exec",
    outcome: "ok",
    durationMs: 100,
    resultSizeBytes: 10,
    source: "otlp_logs",
    toolCallId: identity,
    arguments: JSON.stringify({ command }),
  };
}
