/**
 * The aggregates that fresh calls of days the per-day rollups already hold
 * (late data: yesterday's calls after midnight, an agent's old events) add
 * to them (sql/duckdb/replica_days.sql). Computed here as a catch-up appends
 * the rows, and appended as more rollup rows with the rows themselves: a
 * statement per rollup table and catch-up, as `INSERT … SELECT … GROUP BY`
 * over a staging table, was most of a small catch-up's cost (issue #31).
 * The sums are those of the SQL they replace: integer counts and sums exact
 * (as bigints), a nullable double's sum NULL when no row has one.
 *
 * @module
 */
import type { SourceRow } from "./replica_source.ts";

/** How a rollup column folds a call's value: count(*), count(*) FILTER (outcome = 'error'), … */
type Measure =
  | { kind: "count" }
  | { kind: "errors" }
  /** sum() of a column never null, or coalesce(sum(), 0): exact, as a bigint. */
  | { kind: "sum"; column: string }
  /** count(column). */
  | { kind: "present"; column: string }
  /** sum() of a nullable double: NULL when no row has one. */
  | { kind: "doubleSum"; column: string };

interface RollupSpec {
  /** The rollup table, whose columns are org_id, day, `keys`, then `measures`. */
  table: string;
  /** The replica table its calls come from. */
  from: "tool_calls" | "model_calls";
  keys: readonly string[];
  measures: readonly Measure[];
}

/** Each rollup table's columns in order, as replica_days.sql creates them. */
const ROLLUPS: readonly RollupSpec[] = [
  {
    table: "activity_days",
    from: "tool_calls",
    keys: ["session_id", "actor_id", "agent_system"],
    measures: [{ kind: "count" }, { kind: "errors" }],
  },
  {
    table: "tool_days",
    from: "tool_calls",
    keys: ["actor_id", "agent_system", "tool_name", "tool_type"],
    measures: [
      { kind: "count" },
      { kind: "errors" },
      { kind: "sum", column: "duration_ms" },
      { kind: "present", column: "duration_ms" },
    ],
  },
  {
    table: "model_days",
    from: "model_calls",
    keys: ["actor_id", "agent_system", "provider_name", "model"],
    measures: [
      { kind: "sum", column: "input_tokens" },
      { kind: "sum", column: "output_tokens" },
      { kind: "sum", column: "cache_read_tokens" },
      { kind: "sum", column: "cache_creation_tokens" },
      { kind: "doubleSum", column: "cost_usd" },
      { kind: "present", column: "cost_usd" },
      { kind: "doubleSum", column: "estimated_cost_usd" },
      { kind: "count" },
    ],
  },
];

/** A rollup row's values past its keys. */
type Totals = (bigint | number | null)[];

/** How a rollup row's columns are appended (replica.ts's `append` kinds). */
export type RollupColumnKind = "text" | "int" | "int64" | "real";

/** Rows ready for an appender: the table, its column kinds and its rows. */
export interface RollupRows {
  table: string;
  kinds: readonly RollupColumnKind[];
  rows: readonly (readonly unknown[])[];
}

/** The late calls of one catch-up transaction, folded into rollup rows by key. */
export class LateRollups {
  readonly #columns: (table: "tool_calls" | "model_calls") => readonly string[];
  readonly #groups = new Map<string, Map<string, { key: unknown[]; totals: Totals }>>();
  readonly #days = new Map<string, [string, number]>();
  readonly #positionsOf = new Map<string, ReadonlyMap<string, number>>();

  /** `columns`: the replica table's column names, in the order its rows hold them. */
  constructor(columns: (table: "tool_calls" | "model_calls") => readonly string[]) {
    this.#columns = columns;
  }

  /** Where each column sits in `table`'s rows, found once per table. */
  #positions(table: "tool_calls" | "model_calls"): ReadonlyMap<string, number> {
    let positions = this.#positionsOf.get(table);
    if (positions === undefined) {
      positions = new Map(this.#columns(table).map((name, i) => [name, i]));
      this.#positionsOf.set(table, positions);
    }
    return positions;
  }

  get size(): number {
    return this.#days.size;
  }

  /** Folds one late call of `table` (as appended) of the UTC day `day` into the rollups. */
  add(table: "tool_calls" | "model_calls", row: SourceRow, day: number): void {
    const positions = this.#positions(table);
    const at = (column: string) => row[positions.get(column)!];
    const org = String(at("org_id"));
    this.#days.set(JSON.stringify([org, day]), [org, day]);
    for (const spec of ROLLUPS) {
      if (spec.from !== table) continue;
      const key = [org, day, ...spec.keys.map(at)];
      const id = JSON.stringify(key);
      let groups = this.#groups.get(spec.table);
      if (groups === undefined) this.#groups.set(spec.table, groups = new Map());
      let group = groups.get(id);
      if (group === undefined) {
        group = { key, totals: spec.measures.map((m) => m.kind === "doubleSum" ? null : 0n) };
        groups.set(id, group);
      }
      fold(group.totals, spec.measures, at);
    }
  }

  /** The rollup rows to append, and the (organization, day) pairs for `added_days`. */
  rows(): RollupRows[] {
    const out: RollupRows[] = [];
    for (const spec of ROLLUPS) {
      const groups = this.#groups.get(spec.table);
      if (groups === undefined) continue;
      out.push({
        table: spec.table,
        kinds: [
          "text",
          "int",
          ...spec.keys.map((): RollupColumnKind => "text"),
          ...spec.measures.map((m): RollupColumnKind => m.kind === "doubleSum" ? "real" : "int64"),
        ],
        rows: [...groups.values()].map(({ key, totals }) => [...key, ...totals]),
      });
    }
    if (this.#days.size > 0) {
      out.push({ table: "added_days", kinds: ["text", "int"], rows: [...this.#days.values()] });
    }
    return out;
  }
}

function fold(totals: Totals, measures: readonly Measure[], at: (column: string) => unknown) {
  for (let i = 0; i < measures.length; i++) {
    const measure = measures[i]!;
    const total = totals[i];
    switch (measure.kind) {
      case "count":
        totals[i] = (total as bigint) + 1n;
        break;
      case "errors":
        if (at("outcome") === "error") totals[i] = (total as bigint) + 1n;
        break;
      case "sum": {
        const value = at(measure.column);
        if (value !== null && value !== undefined) {
          totals[i] = (total as bigint) + BigInt(String(value));
        }
        break;
      }
      case "present":
        if (at(measure.column) !== null && at(measure.column) !== undefined) {
          totals[i] = (total as bigint) + 1n;
        }
        break;
      case "doubleSum": {
        const value = at(measure.column);
        if (value !== null && value !== undefined) {
          totals[i] = ((total as number) ?? 0) + Number(value);
        }
        break;
      }
    }
  }
}
