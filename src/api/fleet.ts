/**
 * `GET /v1/fleet` (an extension of the spec): the organization's actors, each
 * with when it was last seen, its sessions of the last 7 days, the agents and
 * versions it runs and what of its telemetry the server did not understand;
 * `silent_days=N` keeps those that sent nothing for N days, or never sent.
 * Read from the key store's actors and the small telemetry tables
 * (`session_actors`, `sessions`, `unmapped_events`), never from calls.
 *
 * @module
 */
import { z } from "zod";
import { jsonResponse } from "../http/responses.ts";
import { formatTimestamp } from "../time.ts";
import type { OrgActor } from "./actor_names.ts";
import type { ApiHandler, ApiRoute } from "./context.ts";
import { parseQuery } from "./params.ts";
import { Fleet } from "./schemas.ts";

/** Most actors answered. */
export const FLEET_MAX_ACTORS = 1000;
/** Most agent-and-version rows answered per actor (the most recently seen). */
export const FLEET_MAX_AGENTS = 100;
/** The span of `sessions_7d`. */
const RECENT_MS = 7 * 86_400_000;
const DAY_MS = 86_400_000;
const MAX_SILENT_DAYS = 3650;

/** `silent_days`: an integer 1–3650; absent or empty is no filter. */
const silentDaysParam = z.string().optional().transform((raw, ctx) => {
  if (raw === undefined || raw === "") return undefined;
  if (!/^-?\d+$/.test(raw)) {
    ctx.addIssue({
      code: "custom",
      message: `invalid silent_days: ${
        JSON.stringify(raw)
      } (must be an integer from 1 to ${MAX_SILENT_DAYS})`,
    });
    return z.NEVER;
  }
  const value = Number(raw);
  if (value > MAX_SILENT_DAYS) {
    ctx.addIssue({ code: "custom", message: `invalid silent_days: ${raw} > ${MAX_SILENT_DAYS}` });
  } else if (value < 1) {
    ctx.addIssue({ code: "custom", message: `invalid silent_days: ${raw} < 1` });
  }
  return value;
}).meta({
  description:
    "Only actors that sent nothing for this many days: whose last telemetry is at least that old, or that never sent any (revoked actors that never sent are not listed). Empty: no filter.",
  type: "integer",
  minimum: 1,
  maximum: MAX_SILENT_DAYS,
});

const fleetQuery = z.object({ silent_days: silentDaysParam });

type Row = Record<string, unknown>;

interface FleetEntry {
  actorId: string;
  lastSeen: number | null;
  sessions: number;
  agents: Row[];
  unmapped: Row[];
}

const getFleet: ApiHandler = async ({ url, orgId, services }) => {
  const { silent_days: silentDays } = parseQuery(fleetQuery, url);
  const now = services.clock();
  const statement = services.reader.queries.fleet(orgId, {
    silentSince: silentDays === undefined ? null : now - silentDays * DAY_MS,
    sessionsSince: now - RECENT_MS,
    limit: FLEET_MAX_ACTORS,
  });
  const [[rows], actors] = await Promise.all([
    services.reader.read([statement]) as Promise<Row[][]>,
    services.actorNames.actorsOf(orgId),
  ]);
  const entries = fleetEntries(rows!, actors);
  const names = new Map(actors.map((actor) => [actor.id, actor.name]));
  return jsonResponse({
    data: entries.map((entry) => ({
      actor_id: entry.actorId,
      actor_name: names.get(entry.actorId) ?? "",
      last_seen: entry.lastSeen === null ? null : formatTimestamp(entry.lastSeen),
      sessions_7d: entry.sessions,
      agents: entry.agents.sort(byRecency("agent", "agent_version")).slice(0, FLEET_MAX_AGENTS)
        .map((row) => ({
          agent: String(row.agent),
          agent_version: String(row.agent_version),
          last_seen: formatTimestamp(Number(row.last_seen)),
        })),
      unmapped_events: entry.unmapped.sort(byRecency("agent", "event_name", "reason"))
        .map((row) => ({
          agent: String(row.agent),
          event_name: String(row.event_name),
          reason: String(row.reason),
          records: Number(row.count),
          last_seen: formatTimestamp(Number(row.last_seen)),
        })),
    })),
  });
};

/**
 * The answer's actors: those the statement answered, most recently seen
 * first (ties by id), then the organization's unrevoked actors that never
 * sent telemetry (by id), up to {@link FLEET_MAX_ACTORS}.
 */
function fleetEntries(rows: readonly Row[], actors: readonly OrgActor[]): FleetEntry[] {
  const answered = new Map<string, FleetEntry>();
  const senders = new Set<string>();
  for (const row of rows) {
    const actorId = String(row.actor_id);
    senders.add(actorId);
    if (row.kind === "actor") {
      answered.set(actorId, {
        actorId,
        lastSeen: Number(row.last_seen),
        sessions: Number(row.count),
        agents: [],
        unmapped: [],
      });
    }
  }
  for (const row of rows) {
    const entry = answered.get(String(row.actor_id));
    if (row.kind === "agent") entry?.agents.push(row);
    else if (row.kind === "unmapped") entry?.unmapped.push(row);
  }
  const entries = [...answered.values()].sort((a, b) =>
    b.lastSeen! - a.lastSeen! || compareText(a.actorId, b.actorId)
  );
  const silent = actors.filter((actor) => !actor.revoked && !senders.has(actor.id))
    .map((actor) => actor.id).sort(compareText);
  for (const actorId of silent) {
    if (entries.length >= FLEET_MAX_ACTORS) break;
    entries.push({ actorId, lastSeen: null, sessions: 0, agents: [], unmapped: [] });
  }
  return entries;
}

/** Most recent `last_seen` first, ties by the columns in order. */
function byRecency(...columns: string[]): (a: Row, b: Row) => number {
  return (a, b) => {
    const diff = Number(b.last_seen) - Number(a.last_seen);
    if (diff !== 0) return diff;
    for (const column of columns) {
      const order = compareText(String(a[column]), String(b[column]));
      if (order !== 0) return order;
    }
    return 0;
  };
}

/** Code point order: the byte order of UTF-8, as both stores compare text. */
function compareText(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** Routes of this module. */
export const fleetRoutes: ApiRoute[] = [
  {
    pattern: "/v1/fleet",
    handler: getFleet,
    tag: "fleet",
    summary:
      "The organization's actors: last seen, agents and versions, unmapped telemetry (an extension)",
    description:
      "One row per actor that sent telemetry, and per unrevoked actor that never did (`last_seen` null, listed last). `last_seen` counts tool calls and records that stored nothing; `sessions_7d` counts sessions with a tool call of the actor in the 7 days ending at the request. At most 1,000 actors, most recently seen first, ties by actor id.",
    query: fleetQuery,
    response: Fleet,
    errors: ["invalid_request", "overloaded"],
  },
];
