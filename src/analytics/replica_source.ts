import { NamedError } from "../errors.ts";

/**
 * The sources an analytics replica copies telemetry from: `telemetry.db`
 * (SQLite) or a PostgreSQL database (docs/design.md §8). A source reads what changed
 * since the replica's recorded progress and writes it through a
 * {@link ReplicaTarget}, which owns the DuckDB side. This file holds what
 * both sources share and imports neither; `replica.ts` opens the one a spec names.
 *
 * @module
 */
/** Where a replica copies telemetry from. */
export type ReplicaSourceSpec =
  | { engine: "sqlite"; path: string }
  | { engine: "postgres"; url: string };

/** Most tool calls (and most model calls, and most tombstones) read per chunk. */
export const CHUNK_ROWS = 10_000;
/**
 * Rows copied per DuckDB transaction. Larger groups were no faster and cost
 * memory: a first build of 1.8M rows peaked at 894 MB of server RSS with
 * 500k-row groups of 50k-row chunks, 492 MB with 100k and 10k, at the same rate.
 */
export const GROUP_ROWS = 100_000;

/**
 * A catch-up copying more rows than this (tombstones included; about two
 * seconds of copying) counts as a build: insight requests get a retryable 503
 * instead of waiting for it, and the tables are sorted by time after it. A
 * smaller first build is waited for. Counted in rows, not seqs: PostgreSQL's
 * sequence runs 2-4 times ahead of the rows (sessions, decisions, rolled-back
 * transactions take seqs too), SQLite's about level with them.
 */
export const BUILDING_ROWS = 100_000;

/** How far a replica has copied; stored in its meta table with the rows. */
export interface ReplicaProgress {
  /**
   * Every telemetry seq up to this one is in the replica. PostgreSQL: the
   * sequence's value read just before the last complete catch-up's snapshot
   * (seqs of transactions still open then follow in the next catch-up).
   */
  seq: number;
  /**
   * PostgreSQL: the snapshot (`pg_snapshot` text) the last complete catch-up
   * read; null before the first one completed, and always for SQLite.
   */
  mark: string | null;
}

/** The progress of an empty replica. */
export const NO_PROGRESS: ReplicaProgress = { seq: 0, mark: null };

/**
 * The replicated tables (they all have `org_id` and `ts`), in the order a
 * chunk lists them and their merges run.
 */
export const REPLICA_TABLES = [
  "tool_calls",
  "model_calls",
  "risk_flags",
  "domain_hits",
  "metric_points",
] as const;

/** A replicated table. */
export type ReplicaTable = typeof REPLICA_TABLES[number];

/** A source row: its values in the column order of the replica table (tombstones: seq, tbl, row_key). */
export type SourceRow = readonly unknown[];

/** One DuckDB transaction of a catch-up. */
export interface ReplicaBatch {
  /** Rows appended so far (tombstones included). */
  readonly rows: number;
  /**
   * Appends rows; throws {@link ReplicaClosedError} once the replica is closing.
   * `fresh`: the source knows no row of theirs has a copy of its key in the
   * replica (nor among rows appended earlier in the catch-up), so they are
   * inserted without the merge's delete by key, a scan of the whole key column.
   */
  append(
    table: ReplicaTable | "tombstones",
    rows: readonly SourceRow[],
    fresh?: boolean,
  ): Promise<void>;
}

/** The replica's side of one catch-up. */
export interface ReplicaTarget {
  /**
   * Announces that the catch-up copies something, from seq `from` towards `to`
   * (logs, stats), about `rows` rows: exact or an honest estimate up to
   * BUILDING_ROWS, and past it at least BUILDING_ROWS + 1 (counting may stop there).
   */
  start(from: number, to: number, rows: number): void;
  /**
   * Runs `fill` in one DuckDB transaction, then merges what it appended and
   * commits, recording the progress `fill` returns (null: none yet).
   */
  write(fill: (batch: ReplicaBatch) => Promise<ReplicaProgress | null>): Promise<void>;
}

/** A database the replica copies from. */
export interface ReplicaSource {
  /** Recorded in the replica: a replica of another source (or database) is rebuilt. */
  readonly identity: string;
  /**
   * How tombstones meet the rows of the same catch-up. "seq": a tombstone
   * drops rows of its key with a lower seq (seq order is commit order).
   * "key": it drops every row of its key, before the catch-up's copies merge.
   */
  readonly tombstones: "seq" | "key";
  /**
   * Whether a copied row's old copy in the replica, if any, has the row's ts
   * (updates in place keep it; rows stored again under their key leave
   * tombstones that drop the old copy): the merge then finds old copies by
   * key and ts, and DuckDB skips the row groups outside the rows' times.
   */
  readonly oldCopiesKeepTs?: boolean;
  /** Why a replica at `progress` cannot continue from this source (it is ahead of it), or null. */
  aheadReason(progress: ReplicaProgress): Promise<string | null>;
  /** Copies everything committed since `progress` into `target`. */
  catchUp(progress: ReplicaProgress, target: ReplicaTarget): Promise<void>;
  close(): Promise<void>;
}

/** The replica is closed (or closing): no more catch-ups or reads. */
export class ReplicaClosedError extends NamedError {}
