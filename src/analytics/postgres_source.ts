/**
 * PostgreSQL as the replica's source (docs/design.md §8). Sequence numbers are taken
 * before commit, so a catch-up does not copy by seq: in one REPEATABLE READ
 * transaction it copies the rows of the transactions its snapshot sees and
 * the previous catch-up's snapshot (the replica's mark) did not, then records
 * its own snapshot as the new mark in the same DuckDB transaction as the last
 * rows (sql/postgres/replica_source.sql). A catch-up that stops midway keeps
 * the old mark, so the next one copies the same transactions again (and any
 * since); merging by key makes the copies idempotent.
 *
 * @module
 */
import replicaSql from "../../sql/postgres/replica_source.sql" with { type: "text" };
import { namedSql, parseNamedSql } from "../store/named_sql.ts";
import { connectPostgres, type Sql, type TransactionSql } from "../store/postgres/client.ts";
import { deriveLineColumns } from "./file_changes.ts";
import {
  BUILDING_ROWS,
  CHUNK_ROWS,
  GROUP_ROWS,
  REPLICA_TABLES,
  type ReplicaBatch,
  type ReplicaProgress,
  type ReplicaSource,
  type ReplicaTarget,
  type SourceRow,
} from "./replica_source.ts";

const statements = parseNamedSql(replicaSql);
const sqlOf = (name: string) => namedSql(statements, name);

/** The tables a catch-up copies rows from, largest first: counting stops at BUILDING_ROWS. */
const COUNTED: readonly string[] = [
  "tool_calls",
  "model_calls",
  "metric_points",
  "domain_hits",
  "risk_flags",
];

/** Transaction ids between two ranges of unseen ones below which they are read as one. */
const RANGE_GAP = 64n;

/** A snapshot in which no transaction is visible: the mark before the first catch-up. */
const NOTHING_SEEN = "1:1:";

/** A position in (txid, seq) order; txid as text (xid8 exceeds 2^53). */
interface Key {
  txid: string;
  seq: number;
}

/** The keys in (from, to]. */
interface Range {
  from: Key;
  to: Key;
}

/** One catch-up's transaction and the snapshot of the previous one. */
interface Run {
  tx: TransactionSql;
  since: string;
}

/** A small pool (one connection) on the telemetry database. */
export class PostgresReplicaSource implements ReplicaSource {
  readonly tombstones = "key";
  readonly identity: string;
  readonly #sql: Sql;

  private constructor(sql: Sql, identity: string) {
    this.#sql = sql;
    this.identity = identity;
  }

  /** Connects and reads which database this is (cluster system identifier and database oid). */
  static async open(url: string): Promise<PostgresReplicaSource> {
    const sql = connectPostgres(url, { max: 1, applicationName: "agent-telemetry replica" });
    try {
      const [row] = await sql.unsafe<{ identity: string }[]>(sqlOf("source_identity"));
      return new PostgresReplicaSource(sql, row!.identity);
    } catch (error) {
      await sql.end();
      throw error;
    }
  }

  /**
   * A mark from a transaction the database has not reached yet means it was
   * restored from an earlier backup: its new transactions would reuse ids the
   * mark counts as copied.
   */
  async aheadReason(progress: ReplicaProgress): Promise<string | null> {
    if (progress.mark === null) return null;
    const [row] = await this.#sql.unsafe<{ snapshot: string }[]>(sqlOf("current_snapshot"));
    const now = xmaxOf(row!.snapshot);
    return xmaxOf(progress.mark) > now
      ? `replica at transaction ${xmaxOf(progress.mark)} is ahead of the database at ${now}`
      : null;
  }

  async catchUp(progress: ReplicaProgress, target: ReplicaTarget): Promise<void> {
    const [reached] = await this.#sql.unsafe<{ seq: number }[]>(sqlOf("seq_reached"));
    await this.#sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
      const [row] = await tx.unsafe<{ snapshot: string }[]>(sqlOf("current_snapshot"));
      const snapshot = row!.snapshot;
      if (snapshot === progress.mark) return;
      const since = progress.mark ?? NOTHING_SEEN;
      const run: Run = { tx, since };
      const ranges = unseenRanges(since, snapshot);
      // An empty replica has no tombstones to apply (see below).
      const counted = progress.mark === null ? COUNTED : [...COUNTED, "tombstones"];
      const copied = await countRows(run, ranges, counted, BUILDING_ROWS + 1);
      target.start(progress.seq, reached!.seq, copied);
      // Copies show rows as they are in this snapshot, so the tombstones
      // committed since the mark go first and drop every row of their key,
      // whatever the seqs (not commit order here): a key stored again after
      // its deletion was stored by a transaction the mark did not see either,
      // so its copy follows and stays. An empty replica has nothing to delete.
      const tombstones = new RangeWalk(progress.mark === null ? [] : ranges);
      const rows = new RangeWalk(ranges);
      while (!rows.done) {
        await target.write(async (batch) => {
          while (!tombstones.done && batch.rows < GROUP_ROWS) {
            await tombstones.step((from, to) => copyTombstones(run, from, to, batch));
          }
          while (tombstones.done && !rows.done && batch.rows < GROUP_ROWS) {
            await rows.step((from, to) => copyRows(run, from, to, batch));
          }
          return rows.done ? { seq: reached!.seq, mark: snapshot } : null;
        });
      }
    });
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 });
  }
}

/**
 * The keys of the transactions `snapshot` sees and `since` did not: those in
 * progress at `since` and those from its xmax on. The ones in between are
 * skipped (they matter when a long transaction held `since`'s xmin back while
 * many others committed), except in gaps of up to RANGE_GAP ids, where one
 * scan costs less than a query per range; the reads' own visibility test
 * leaves those out anyway.
 */
function unseenRanges(since: string, snapshot: string): Range[] {
  const [, xmax, xip] = since.split(":");
  const spans: [bigint, bigint][] = (xip ? xip.split(",") : [])
    .map((txid) => [BigInt(txid), BigInt(txid) + 1n]);
  spans.push([BigInt(xmax!), xmaxOf(snapshot)]);
  spans.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const merged: [bigint, bigint][] = [];
  for (const [lo, hi] of spans) {
    const last = merged.at(-1);
    if (last && lo - last[1] <= RANGE_GAP) last[1] = hi > last[1] ? hi : last[1];
    else merged.push([lo, hi]);
  }
  return merged.map(([lo, hi]) => ({
    from: { txid: String(lo), seq: 0 },
    to: { txid: String(hi), seq: 0 },
  }));
}

/** A position in a list of ranges, paged through across DuckDB transactions. */
class RangeWalk {
  readonly #ranges: readonly Range[];
  #index = 0;
  #from: Key | undefined;

  constructor(ranges: readonly Range[]) {
    this.#ranges = ranges;
    this.#from = ranges[0]?.from;
  }

  get done(): boolean {
    return this.#index >= this.#ranges.length;
  }

  /** Runs `page`, which copies keys after `from` up to `to` and returns where it stopped (null: at `to`). */
  async step(page: (from: Key, to: Key) => Promise<Key | null>): Promise<void> {
    const reached = await page(this.#from!, this.#ranges[this.#index]!.to);
    if (reached !== null) {
      this.#from = reached;
      return;
    }
    this.#index++;
    this.#from = this.#ranges[this.#index]?.from;
  }
}

/**
 * How many rows of `tables` the catch-up copies from `ranges`, counted up to `atMost`
 * (an index-only walk of each table's (txid, seq) index, as the copy's).
 */
async function countRows(
  run: Run,
  ranges: readonly Range[],
  tables: readonly string[],
  atMost: number,
): Promise<number> {
  let rows = 0;
  for (const table of tables) {
    for (const { from, to } of ranges) {
      if (rows >= atMost) return rows;
      const params = [run.since, from.txid, from.seq, to.txid, to.seq, atMost - rows];
      const [row] = await values(run, "rows_in_range", params, table);
      rows += Number(row![0]);
    }
  }
  return rows;
}

/** Copies a page of tombstones after `from`; returns the last key copied, or null when done. */
async function copyTombstones(
  run: Run,
  from: Key,
  to: Key,
  batch: ReplicaBatch,
): Promise<Key | null> {
  const params = [run.since, from.txid, from.seq, to.txid, to.seq, CHUNK_ROWS];
  const rows = await values(run, "tombstones_page", params);
  await batch.append("tombstones", rows);
  if (rows.length < CHUNK_ROWS) return null;
  const last = rows.at(-1)!;
  return { txid: String(last[3]), seq: Number(last[0]) };
}

/**
 * Copies the rows after `from`, up to `to` or at most CHUNK_ROWS tool calls
 * and as many model calls; returns the key it stopped at, or null at `to`.
 */
async function copyRows(run: Run, from: Key, to: Key, batch: ReplicaBatch): Promise<Key | null> {
  let hi = to;
  const nthParams = [run.since, from.txid, from.seq, to.txid, to.seq, CHUNK_ROWS - 1];
  // Issued together, the reads are pipelined on the one connection.
  const bounds = await Promise.all(
    ["nth_tool_call_key", "nth_model_call_key", "nth_metric_point_key"].map((name) =>
      values(run, name, nthParams)
    ),
  );
  for (const [row] of bounds) {
    if (row !== undefined) hi = minKey(hi, { txid: String(row[0]), seq: Number(row[1]) });
  }
  const rangeParams = [run.since, from.txid, from.seq, hi.txid, hi.seq];
  const chunk = await Promise.all(
    REPLICA_TABLES.map((table) => values(run, `${table}_range`, rangeParams)),
  );
  deriveLineColumns(chunk[REPLICA_TABLES.indexOf("tool_calls")]!);
  for (const [i, table] of REPLICA_TABLES.entries()) await batch.append(table, chunk[i]!);
  return hi === to ? null : hi;
}

/** Runs a statement of replica_source.sql (`table` fills its `{table}`, from a fixed list). */
async function values(
  run: Run,
  name: string,
  params: (string | number)[],
  table?: string,
): Promise<SourceRow[]> {
  const text = table === undefined ? sqlOf(name) : sqlOf(name).replaceAll("{table}", table);
  return await run.tx.unsafe(text, params, { prepare: true }).values();
}

function minKey(a: Key, b: Key): Key {
  const ta = BigInt(a.txid);
  const tb = BigInt(b.txid);
  if (ta !== tb) return ta < tb ? a : b;
  return a.seq <= b.seq ? a : b;
}

/** `pg_snapshot` text is `xmin:xmax:xip,…`. */
function xmaxOf(snapshot: string): bigint {
  return BigInt(snapshot.split(":")[1]!);
}
