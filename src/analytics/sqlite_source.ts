/**
 * `telemetry.db` as the replica's source. One writer makes seq order commit
 * order, so a catch-up copies the rows with seq in (last seq, `counters.seq`
 * read at its start], in chunks of at most CHUNK_ROWS tool calls and as many
 * model calls, each read in one short read transaction (none is held across
 * an await). Every group of chunks records the seq it reached, so a crash
 * loses nothing.
 *
 * Most copied rows are new, and the source can tell which: a row whose rowid
 * is above the highest rowid of its table when the last chunk was read was
 * stored after that read, so no copy of its key can be in the replica, and it
 * skips the merge's delete by key (a scan of the whole key column). This holds
 * because SQLite keeps a row's rowid while it is updated in place (a span
 * annotating its log's call, a decision, a rescan), and gives a new one only
 * to a row deleted and inserted again: a reject replaced by its result, or a
 * row retention deleted, whose `tool_calls` tombstone drops the old copy by
 * seq. A replacement leaves a `detections` tombstone of its id in the same
 * transaction, just before the new row's seq; the catch-up that copies the
 * new row adds a `tool_calls` tombstone of that seq, which drops the old copy
 * (and its flags and hits, as the `detections` one does) and keeps the new.
 * Flags and domain hits are fresh with their fresh call. Model calls and
 * metric points are never updated. The highest rowids are kept in memory:
 * after a restart the first chunk merges every row by key.
 *
 * Updates in place keep a call's ts, so the rows that do go through the merge
 * find their old copy by (id, ts), and DuckDB skips the row groups outside
 * their times (`oldCopiesKeepTs`).
 *
 * @module
 */
import type { DatabaseSync, SQLOutputValue, StatementSync } from "node:sqlite";
import sourceSql from "../../sql/sqlite/replica_source.sql" with { type: "text" };
import { namedSql, parseNamedSql } from "../store/named_sql.ts";
import { deriveLineColumns } from "./file_changes.ts";
import { openDatabase } from "../store/sqlite/database.ts";
import {
  CHUNK_ROWS,
  GROUP_ROWS,
  REPLICA_TABLES,
  type ReplicaProgress,
  type ReplicaSource,
  type ReplicaTable,
  type ReplicaTarget,
} from "./replica_source.ts";

const statements = parseNamedSql(sourceSql);

/** The tables whose rows end with their rowid (replica_source.sql). */
type RowidTable = "tool_calls" | "model_calls" | "metric_points";
type MaxRowids = Record<RowidTable, number>;
/**
 * A row's trailing rowid (replica_source.sql): after the replica's columns,
 * wherever a new column moves it (a fixed position once pointed at model
 * calls' estimated cost, and no model call was ever taken for fresh).
 */
function rowidOf(row: readonly SQLOutputValue[]): number {
  return Number(row[row.length - 1]);
}

interface Chunk {
  hi: number;
  rows: Map<ReplicaTable, SQLOutputValue[][]>;
  tombstones: SQLOutputValue[][];
  maxRowids: MaxRowids;
}

/** A read-only connection to `telemetry.db`. */
export class SqliteReplicaSource implements ReplicaSource {
  readonly identity = "sqlite";
  readonly tombstones = "seq";
  readonly oldCopiesKeepTs = true;
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  /** The highest rowids when the last chunk was read; null before the first read. */
  #knownRowids: MaxRowids | null = null;
  /**
   * The seq of each `detections` tombstone of the last chunk read, by tool
   * call id: a replaced call comes back with a new rowid (see the header).
   * Its new row's seq follows the tombstone's, with no row's seq between, so
   * both fall in one chunk; the chunk before is kept too, as a margin.
   */
  #replaced = new Map<string, number>();
  #replacedBefore = new Map<string, number>();

  private constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Opens `telemetry.db` (already created and migrated) read-only. */
  static open(path: string): SqliteReplicaSource {
    return new SqliteReplicaSource(openDatabase(path, { readOnly: true }));
  }

  aheadReason(progress: ReplicaProgress): Promise<string | null> {
    const seq = this.#currentSeq();
    return Promise.resolve(
      progress.seq > seq
        ? `replica at seq ${progress.seq} is ahead of the telemetry store at seq ${seq}`
        : null,
    );
  }

  async catchUp(progress: ReplicaProgress, target: ReplicaTarget): Promise<void> {
    const to = this.#currentSeq();
    let lo = progress.seq;
    if (to <= lo) return;
    // Seqs count rows here (a call's flags and domain hits share its seq;
    // sessions' recounts take their own): 2.75M seqs for 2.86M rows at 1M calls.
    target.start(lo, to, to - lo);
    while (lo < to) {
      await target.write(async (batch) => {
        while (lo < to && batch.rows < GROUP_ROWS) {
          const chunk = this.#readChunk(lo, to);
          for (const [table, rows, fresh] of this.#splitFresh(chunk)) {
            await batch.append(table, rows, fresh);
          }
          await batch.append("tombstones", chunk.tombstones);
          await batch.append("tombstones", this.#replacements(chunk));
          this.#knownRowids = chunk.maxRowids;
          lo = chunk.hi;
        }
        return { seq: lo, mark: null };
      });
    }
  }

  /**
   * Each table's rows of a chunk, split into those that may have a copy in
   * the replica and those that cannot (fresh), in the order of REPLICA_TABLES.
   */
  #splitFresh(chunk: Chunk): [ReplicaTable, SQLOutputValue[][], boolean][] {
    this.#replacedBefore = this.#replaced;
    this.#replaced = new Map();
    for (const [seq, tbl, key] of chunk.tombstones) {
      if (tbl === "detections") this.#replaced.set(String(key), Number(seq));
    }
    const known = this.#knownRowids;
    const parts: [ReplicaTable, SQLOutputValue[][], boolean][] = [];
    const freshCalls = new Set<string>();
    for (const table of REPLICA_TABLES) {
      const rows = chunk.rows.get(table)!;
      const old: SQLOutputValue[][] = [];
      const fresh: SQLOutputValue[][] = [];
      for (const row of rows) {
        let isFresh: boolean;
        if (known === null) {
          isFresh = false;
        } else if (table === "risk_flags" || table === "domain_hits") {
          isFresh = freshCalls.has(String(row[0]));
        } else {
          isFresh = rowidOf(row) > known[table];
          if (table === "tool_calls" && isFresh) freshCalls.add(String(row[0]));
        }
        (isFresh ? fresh : old).push(row);
      }
      parts.push([table, old, false], [table, fresh, true]);
    }
    return parts;
  }

  close(): Promise<void> {
    this.#statements.clear();
    if (this.#db.isOpen) this.#db.close();
    return Promise.resolve();
  }

  #currentSeq(): number {
    const row = this.#statement("current_seq").get() as { value: number } | undefined;
    return row === undefined ? 0 : Number(row.value);
  }

  /**
   * Reads the next chunk after `lo`, up to `to`, in one short read
   * transaction. No SQLite transaction stays open across an await: a
   * checkpoint on the write connection (same thread) would otherwise wait on
   * it in vain.
   */
  #readChunk(lo: number, to: number): Chunk {
    const db = this.#db;
    db.exec("BEGIN");
    try {
      const hi = Math.min(
        to,
        this.#nthSeq("nth_tool_call_seq", lo) ?? to,
        this.#nthSeq("nth_model_call_seq", lo) ?? to,
        this.#nthSeq("nth_metric_point_seq", lo) ?? to,
      );
      const rows = new Map<ReplicaTable, SQLOutputValue[][]>();
      for (const table of REPLICA_TABLES) {
        rows.set(table, this.#rangeRows(`${table}_range`, lo, hi));
      }
      deriveLineColumns(rows.get("tool_calls")!);
      const max = this.#statement("max_rowids").get() as Record<RowidTable, number | null>;
      return {
        hi,
        rows,
        tombstones: this.#rangeRows("tombstones_range", lo, hi),
        maxRowids: {
          "tool_calls": Number(max.tool_calls ?? 0),
          "model_calls": Number(max.model_calls ?? 0),
          "metric_points": Number(max.metric_points ?? 0),
        },
      };
    } finally {
      db.exec("COMMIT");
    }
  }

  /**
   * A `tool_calls` tombstone for each tool call of the chunk a `detections`
   * tombstone named: it drops the copy the call had before that tombstone,
   * when a reject was replaced by its result, and keeps the new row.
   */
  #replacements(chunk: Chunk): SQLOutputValue[][] {
    const tombstones: SQLOutputValue[][] = [];
    if (this.#replaced.size + this.#replacedBefore.size === 0) return tombstones;
    for (const row of chunk.rows.get("tool_calls")!) {
      const id = String(row[0]);
      const seq = this.#replaced.get(id) ?? this.#replacedBefore.get(id);
      if (seq !== undefined && seq < Number(row[10])) tombstones.push([seq, "tool_calls", row[0]!]);
    }
    return tombstones;
  }

  /** The seq of the CHUNK_ROWS-th row after `lo` in one table, or null when fewer remain. */
  #nthSeq(name: string, lo: number): number | null {
    const row = this.#statement(name).get(lo, CHUNK_ROWS - 1) as { seq: number } | undefined;
    return row === undefined ? null : Number(row.seq);
  }

  /** Source rows (as arrays) of one table with seq in (lo, hi]. */
  #rangeRows(name: string, lo: number, hi: number): SQLOutputValue[][] {
    return this.#statement(name, true).all(lo, hi) as unknown as SQLOutputValue[][];
  }

  #statement(name: string, arrays = false): StatementSync {
    let statement = this.#statements.get(name);
    if (!statement) {
      statement = this.#db.prepare(namedSql(statements, name));
      // Rows as arrays: about twice as fast to read as objects (not yet in the types).
      if (arrays) (statement as ArrayStatement).setReturnArrays(true);
      this.#statements.set(name, statement);
    }
    return statement;
  }
}

type ArrayStatement = StatementSync & { setReturnArrays(enabled: boolean): void };
