/**
 * Builds the read statements of the query API from validated filters: the
 * SQL text comes from the engine's `queries.sql` (`sql/sqlite/`,
 * `sql/postgres/`: the same statement names, `?` placeholders), with
 * parameterized `AND …` predicates spliced in where a filter is set.
 *
 * @module
 */
import { namedSql, parseNamedSql } from "./named_sql.ts";
import { withColumnLists } from "./table_columns.ts";

/** One statement and its positional parameters. */
export interface ReadStatement {
  sql: string;
  params: (string | number | null)[];
}

/** A page of a keyset list: at most `limit` rows (`limit + 1` for a list) after `after`. */
export type PageStatement<F> = (
  orgId: string,
  filters: F,
  after: PageKey | null,
  limit: number,
) => ReadStatement;

/** The statement builders of one SQL dialect. */
export interface TelemetryQueries {
  /** Named statement text (tests inspect query plans with it). */
  sql(name: string): string;
  toolCallsPage: PageStatement<CallFilters>;
  sessionsPage: PageStatement<SessionFilters>;
  /** One page of the export of tool calls: oldest first, after `after`, with flags and domains. */
  exportToolCallsPage: PageStatement<CallFilters>;
  /** One page of the export of whole sessions: `last_seen` oldest first, after `after`. */
  exportSessionsPage: PageStatement<SessionFilters>;
  sessionDetail(orgId: string, sessionId: string): ReadStatement[];
  toolCallDetail(orgId: string, id: string): ReadStatement;
  facet(orgId: string, name: FacetName): ReadStatement;
  /** What the organization's agents (or one actor's: `""` for all) sent that stored nothing. */
  unmappedEvents(orgId: string, actorId: string): ReadStatement;
  /**
   * The sessions with every dimension of `dims` (rows of `session_id`, sorted),
   * what narrows an insight (docs/api.md §4.22); `dims` is not empty.
   */
  dimensionSessions(orgId: string, dims: readonly (readonly [string, string])[]): ReadStatement;
  /**
   * Every session of the organization with dimension `key` (rows of `session_id`, `value`): what
   * groups an insight by it (docs/api.md §4.23).
   */
  sessionDimensionValues(orgId: string, key: string): ReadStatement;
  /** Every dimension key's values (`key`, `value`), then what each key dropped (`key`, `dropped`). */
  dimensions(orgId: string): ReadStatement[];
  /** The organization's actors that sent telemetry, and the fleet's view of some of them. */
  fleet(orgId: string, options: FleetOptions): ReadStatement;
}

/** Which actors the fleet answers for, and the start of its recent sessions. */
export interface FleetOptions {
  /** Only actors last seen at or before this time (ms); null for any. */
  silentSince: number | null;
  /** Sessions with a call at or after this time (ms) are counted. */
  sessionsSince: number;
  /** Most actors answered. */
  limit: number;
}

/** The facets of docs/api.md §4.3 and §4.6. */
export type FacetName =
  | "agents"
  | "domains"
  | "repositories"
  | "tool_names"
  | "tool_types"
  | "categories";

/** Statement builders over one `queries.sql` text. */
export function telemetryQueries(queriesSql: string): TelemetryQueries {
  const queries = withColumnLists(parseNamedSql(queriesSql), () => "?");
  const named = (name: string) => namedSql(queries, name);
  return {
    sql: named,
    toolCallsPage: (...args) => toolCallsPage(named, ...args),
    sessionsPage: (...args) => sessionsPage(named, ...args),
    exportToolCallsPage: (...args) => exportToolCallsPage(named, ...args),
    exportSessionsPage: (...args) => exportSessionsPage(named, ...args),
    unmappedEvents: (orgId, actorId) => ({
      sql: named("unmapped_events"),
      params: [orgId, actorId, actorId],
    }),
    sessionDetail: (orgId, sessionId) =>
      [
        "session",
        "session_tool_calls",
        "session_risk_flags",
        "session_domains",
        "child_sessions",
        "session_model_calls",
      ].map((name) => ({
        sql: named(name),
        params: [orgId, sessionId],
      })),
    fleet: (orgId, { silentSince, sessionsSince, limit }) => ({
      sql: named("fleet"),
      params: [orgId, silentSince ?? Number.MAX_SAFE_INTEGER, sessionsSince, limit],
    }),
    dimensionSessions: (orgId, [first, ...rest]) => {
      const more = dimPredicates(orgId, rest, "session_id");
      return {
        sql: `${DIM_SESSIONS} ${more.sql} ORDER BY session_id`,
        params: [orgId, ...first!, ...more.params],
      };
    },
    sessionDimensionValues: (orgId, key) => ({
      sql: named("session_dimension_values"),
      params: [orgId, key],
    }),
    dimensions: (orgId) =>
      ["dimension_values", "dimension_drops"].map((name) => ({
        sql: named(name),
        params: [orgId],
      })),
    toolCallDetail: (orgId, id) => ({ sql: named("tool_call"), params: [orgId, id] }),
    facet: (orgId, name) => ({ sql: named(`facet_${name}`), params: [orgId] }),
  };
}

type QuerySql = (name: string) => string;

/** A page statement over one dialect's named statements. */
type PageBuilder<F> = (named: QuerySql, ...page: Parameters<PageStatement<F>>) => ReadStatement;

type Param = string | number | null;

/** Filters that select tool calls (docs/api.md §4.2, §4.5). */
export interface CallFilters {
  after?: number;
  before?: number;
  agent?: string;
  actor?: string;
  team?: string[];
  sessionId?: string;
  toolName?: string;
  toolType?: string;
  category?: string;
  outcome?: string;
  /** `dim.<key>=<value>` pairs, all of which the call's session must have (docs/api.md §4.22). */
  dims?: [string, string][];
}

/** Sessions of the organization `?` with the dimension `?` = `?`, on `session_dimensions_by_value`. */
const DIM_SESSIONS =
  "SELECT session_id FROM session_dimensions WHERE org_id = ? AND key = ? AND value = ?";

/** The predicates of `dim.<key>=<value>` filters on a row whose session is `column`. */
function dimPredicates(
  orgId: string,
  dims: readonly (readonly [string, string])[] | undefined,
  column: string,
): { sql: string; params: Param[] } {
  const parts: string[] = [];
  const params: Param[] = [];
  for (const [key, value] of dims ?? []) {
    parts.push(`AND ${column} IN (${DIM_SESSIONS})`);
    params.push(orgId, key, value);
  }
  return { sql: parts.join(" "), params };
}

/** A keyset position: the last row's sort value and id. */
export type PageKey = [number, string];

/** `AND` predicates and their parameters, in the order they are added. */
class Predicates {
  readonly #parts: string[] = [];
  readonly params: Param[] = [];

  /** Adds `sql` (`AND …`) with the values of its placeholders. */
  add(sql: string, ...values: Param[]): void {
    this.#parts.push(sql);
    this.params.push(...values);
  }

  /** Adds `AND column IN (?, …)` over `values`. */
  addIn(column: string, values: readonly string[]): void {
    this.add(`AND ${column} IN (${values.map(() => "?").join(", ")})`, ...values);
  }

  get sql(): string {
    return this.#parts.join(" ");
  }
}

function callPredicates(
  orgId: string,
  filters: CallFilters,
  sessionColumn = "session_id",
): Predicates {
  const where = new Predicates();
  if (filters.after !== undefined) where.add("AND ts >= ?", filters.after);
  if (filters.before !== undefined) where.add("AND ts <= ?", filters.before);
  if (filters.agent !== undefined) where.add("AND agent_system = ?", filters.agent);
  if (filters.actor !== undefined) where.add("AND actor_id = ?", filters.actor);
  if (filters.team !== undefined) where.addIn("actor_id", filters.team);
  if (filters.sessionId !== undefined) where.add("AND session_id = ?", filters.sessionId);
  if (filters.toolName !== undefined) where.add("AND tool_name = ?", filters.toolName);
  if (filters.toolType !== undefined) where.add("AND tool_type = ?", filters.toolType);
  if (filters.category !== undefined) where.add("AND category = ?", filters.category);
  if (filters.outcome !== undefined) where.add("AND outcome = ?", filters.outcome);
  const dims = dimPredicates(orgId, filters.dims, sessionColumn);
  if (dims.sql !== "") where.add(dims.sql, ...dims.params);
  return where;
}

function splice(sql: string, marker: string, predicate: string): string {
  return sql.replace(marker, predicate);
}

/** One page of tool calls, newest first; fetches `limit + 1` rows to see if more exist. */
const toolCallsPage: PageBuilder<CallFilters> = (named, orgId, filters, after, limit) => {
  const cursor = after
    ? { sql: " AND (ts, id) < (?, ?)", params: [...after] }
    : { sql: "", params: [] };
  return narrowedPage(
    named,
    "tool_calls_page",
    "ts DESC, id DESC",
    orgId,
    filters,
    cursor,
    limit + 1,
  );
};

/**
 * Most sessions, and most calls in them, a dimension filter may select for a
 * page to read their calls along the session index and sort them (~25 ms at
 * the bound); past either, the value is common enough that the time index
 * finds a page sooner.
 */
export const DIMENSION_FEW = { sessions: 1_000, calls: 5_000 } as const;

/**
 * A tool-call page statement (`name`: its `/*filters*\/`, then `cursor`, then
 * `LIMIT ?`), narrowed by dimensions through tool_calls_by_dimension when
 * `filters.dims` has any.
 */
function narrowedPage(
  named: QuerySql,
  name: string,
  order: string,
  orgId: string,
  filters: CallFilters,
  cursor: { sql: string; params: Param[] },
  limit: number,
): ReadStatement {
  const page = named(name).replace(/;\s*$/, "");
  const fill = (where: Predicates, index: string, limitSql = "?") => ({
    sql: splice(splice(page, "/*index*/", index), "/*filters*/", where.sql + cursor.sql)
      .replace(/LIMIT \?$/, `LIMIT ${limitSql}`),
    params: [orgId, ...where.params, ...cursor.params, limit],
  });
  const { dims, ...others } = filters;
  if (dims === undefined || dims.length === 0) return fill(callPredicates(orgId, filters), "");
  if (!page.endsWith("LIMIT ?")) throw new Error(`${name} must end with LIMIT ?`);
  const inSessions = callPredicates(orgId, others);
  inSessions.add("AND session_id IN (SELECT session_id FROM dimset)");
  const few = fill(
    inSessions,
    named("session_calls_index"),
    "(CASE WHEN (SELECT few FROM dim) THEN ? ELSE 0 END)",
  );
  const many = fill(
    callPredicates(orgId, filters, named("session_column_by_time")),
    "",
    "(CASE WHEN (SELECT few FROM dim) THEN 0 ELSE ? END)",
  );
  const [first, ...rest] = dims;
  const more = dimPredicates(orgId, rest, "session_id");
  let sql = named("tool_calls_by_dimension");
  sql = splice(sql, "/*sessions*/", `${DIM_SESSIONS} ${more.sql}`);
  sql = splice(sql, "/*few*/", few.sql);
  sql = splice(sql, "/*many*/", many.sql);
  return {
    sql: splice(sql, "/*order*/", order),
    params: [
      orgId,
      ...first!,
      ...more.params,
      DIMENSION_FEW.sessions + 1,
      DIMENSION_FEW.sessions,
      DIMENSION_FEW.calls,
      orgId,
      ...few.params,
      ...many.params,
    ],
  };
}

/**
 * The keyset predicate after `after` in ascending `(time, id)` order (both
 * engines seek an index on the time to the row value's first term).
 */
function ascendingAfter(
  time: string,
  id: string,
  after: PageKey | null,
): { sql: string; params: Param[] } {
  if (after === null) return { sql: "", params: [] };
  return { sql: ` AND (${time}, ${id}) > (?, ?)`, params: [...after] };
}

/** One page of the export of tool calls, oldest first; `limit` rows. */
const exportToolCallsPage: PageBuilder<CallFilters> = (named, orgId, filters, after, limit) => {
  const cursor = ascendingAfter("ts", "id", after);
  return narrowedPage(named, "export_tool_calls_page", "ts, id", orgId, filters, cursor, limit);
};

/**
 * One page of the export of whole sessions by `last_seen`, oldest first;
 * `limit` rows. The time bounds select by `last_seen`; actor, team and agent
 * select the sessions with a call of theirs (the session_actors rollup, one
 * row per session, actor and agent), and a domain those that reached it.
 */
const exportSessionsPage: PageBuilder<SessionFilters> = (named, orgId, filters, after, limit) => {
  const where = new Predicates();
  if (filters.after !== undefined) where.add("AND last_seen >= ?", filters.after);
  if (filters.before !== undefined) where.add("AND last_seen <= ?", filters.before);
  if (filters.actor !== undefined || filters.team !== undefined || filters.agent !== undefined) {
    // Both given, both apply: the actor must be in the team.
    const rollup = new Predicates();
    if (filters.actor !== undefined) rollup.add("AND a.actor_id = ?", filters.actor);
    if (filters.team !== undefined) rollup.addIn("a.actor_id", filters.team);
    if (filters.agent !== undefined) rollup.add("AND a.agent_system = ?", filters.agent);
    where.add(
      "AND EXISTS (SELECT 1 FROM session_actors AS a " +
        `WHERE a.org_id = s.org_id AND a.session_id = s.session_id ${rollup.sql})`,
      ...rollup.params,
    );
  }
  if (filters.domain !== undefined) {
    where.add(
      "AND EXISTS (SELECT 1 FROM domain_hits AS d " +
        "WHERE d.org_id = s.org_id AND d.session_id = s.session_id AND d.domain = ?)",
      filters.domain,
    );
  }
  const dims = dimPredicates(orgId, filters.dims, "s.session_id");
  if (dims.sql !== "") where.add(dims.sql, ...dims.params);
  const page = ascendingAfter("last_seen", "session_id", after);
  return {
    sql: splice(named("export_sessions_page"), "/*filters*/", where.sql + page.sql),
    params: [orgId, ...where.params, ...page.params, limit],
  };
};

/** Session filters: call filters plus the domain the session must have reached. */
export interface SessionFilters extends CallFilters {
  domain?: string;
}

/** Whether a filter set needs sessions rebuilt from matching calls. */
export function selectsCalls(filters: SessionFilters): boolean {
  return Object.values(filters).some((value) => value !== undefined);
}

/** One page of sessions by `last_seen`, newest first; `limit + 1` rows. */
const sessionsPage: PageBuilder<SessionFilters> = (named, orgId, filters, after, limit) => {
  if (!selectsCalls(filters)) {
    const page = sessionKeyPage(after);
    return {
      sql: splice(named("sessions_page"), "/*filters*/", page.sql),
      params: [orgId, ...page.params, limit + 1],
    };
  }
  if (filters.after !== undefined && onlyAfter(filters)) {
    const page = sessionKeyPage(after);
    return {
      sql: splice(named("recent_sessions_page"), "/*page*/", page.sql),
      params: [
        orgId,
        filters.after,
        ...page.params,
        limit + 1,
        filters.after,
        filters.after,
        filters.after,
      ],
    };
  }
  const rollup = rollupFilter(filters);
  if (rollup !== null) return rollupSessionsPage(named, orgId, rollup, after, limit);
  return filteredSessionsPage(named, orgId, filters, after, limit);
};

/** Most team members whose sessions the rollup walks one by one (one walk each). */
export const MAX_ROLLUP_TEAM = 64;

/**
 * Filters the session_actors rollup answers exactly: its actors (none: any)
 * and agent, or a domain alone.
 */
interface RollupFilter {
  actors: string[] | null;
  agent: string | undefined;
  domain: string | undefined;
}

/**
 * Most newest sessions a domain's walk checks before it reads the domain's
 * own sessions instead (rollup_sessions_by_domain).
 */
export const DOMAIN_WALK_SESSIONS = 2000;

/**
 * The rollup's view of a filter set, or null when it cannot answer it: a time
 * filter (the rollup holds whole sessions), a domain, actor and team together,
 * a team too large to walk member by member, a domain with other filters,
 * or no actor, team, agent or domain.
 */
export function rollupFilter(filters: SessionFilters): RollupFilter | null {
  const { actor, team, agent, domain, ...others } = filters;
  if (Object.values(others).some((value) => value !== undefined)) return null;
  if (actor !== undefined && team !== undefined) return null;
  if (team !== undefined && (team.length === 0 || team.length > MAX_ROLLUP_TEAM)) return null;
  const actors = actor !== undefined ? [actor] : team ?? null;
  if (domain !== undefined) {
    return actors === null && agent === undefined ? { actors, agent, domain } : null;
  }
  if (actors === null && agent === undefined) return null;
  return { actors, agent, domain };
}

/** A rollup filter as predicates on the session_actors row `alias`. */
function rollupRowPredicates(alias: string, filter: RollupFilter): Predicates {
  const where = new Predicates();
  if (filter.actors !== null) where.addIn(`${alias}.actor_id`, filter.actors);
  if (filter.agent !== undefined) where.add(`AND ${alias}.agent_system = ?`, filter.agent);
  return where;
}

/**
 * Sessions of actors, a team or an agent from the session_actors rollup: one
 * bounded walk per actor (or one down the agent's index), merged; the same
 * rows as {@link filteredSessionsPage} for the same filters.
 */
const rollupSessionsPage: PageBuilder<RollupFilter> = (named, orgId, filter, after, limit) => {
  const inWalk = rollupRowPredicates("x", filter);
  const page = after
    ? { sql: "AND (r.last_seen, r.session_id) < (?, ?)", params: [...after] }
    : { sql: "", params: [] };
  const walks: string[] = [];
  const params: Param[] = [];
  const walk = (name: string, values: Param[], agent = "") => {
    let sql = splice(named(name), "/*agent*/", agent);
    sql = splice(splice(sql, "/*page*/", page.sql), "/*rows*/", inWalk.sql);
    walks.push(sql);
    params.push(orgId, ...values, ...page.params, ...inWalk.params, limit + 1);
  };
  if (filter.domain !== undefined) {
    const sessionPage = page.sql.replaceAll("r.", "");
    let sql = named("rollup_sessions_by_domain");
    for (const predicate of [sessionPage, sessionPage, page.sql.replaceAll("r.", "s.")]) {
      sql = splice(sql, "/*page*/", predicate);
    }
    walks.push(sql);
    const pageSize = limit + 1;
    const walkEnd = DOMAIN_WALK_SESSIONS;
    params.push(orgId, ...page.params, walkEnd, orgId, filter.domain, pageSize);
    params.push(pageSize, orgId, ...page.params, walkEnd, walkEnd);
    params.push(orgId, filter.domain, orgId, ...page.params, pageSize);
  } else if (filter.actors === null) {
    walk("rollup_sessions_by_agent", [filter.agent!]);
  } else {
    for (const actor of filter.actors) {
      if (filter.agent === undefined) walk("rollup_sessions_by_actor", [actor]);
      else walk("rollup_sessions_by_actor", [actor, filter.agent], "AND r.agent_system = ?");
    }
  }
  const rows = rollupRowPredicates("r", filter);
  params.push(limit + 1, orgId, ...rows.params, orgId);
  const sql = splice(
    splice(named("rollup_sessions_page"), "/*walks*/", walks.join("\nUNION ALL\n")),
    "/*rows*/",
    rows.sql,
  );
  return { sql, params };
};

/** The keyset predicate on the sessions table's (last_seen, session_id), after a page's last row. */
function sessionKeyPage(after: PageKey | null): { sql: string; params: Param[] } {
  return after
    ? { sql: "AND (last_seen, session_id) < (?, ?)", params: [...after] }
    : { sql: "", params: [] };
}

function onlyAfter(filters: SessionFilters): boolean {
  return Object.entries(filters).every(([name, value]) => name === "after" || value === undefined);
}

/** Sessions rebuilt from the calls that match the filters (any filter set). */
const filteredSessionsPage: PageBuilder<SessionFilters> = (named, orgId, filters, after, limit) => {
  const where = callPredicates(orgId, filters);
  if (filters.domain !== undefined) {
    where.add(
      "AND session_id IN (SELECT session_id FROM domain_hits WHERE org_id = ? AND domain = ?)",
      orgId,
      filters.domain,
    );
  }
  const params: Param[] = [orgId, ...where.params, orgId];
  let page = "";
  if (after) {
    page = "AND (g.last_seen, g.session_id) < (?, ?)";
    params.push(...after);
  }
  params.push(limit + 1);
  const sql = splice(
    splice(named("filtered_sessions_page"), "/*filters*/", where.sql),
    "/*page*/",
    page,
  );
  return { sql, params };
};
