/**
 * Answers of insights kept for repeated requests. A window ends at its
 * request's time, so two requests never have the same window; they get the
 * same answer when the replica is at the same position (no row copied or
 * deleted in between) and no row left or entered the window as it slid: the
 * earliest row at or after the old start is not before the new start, and the
 * earliest row at or after the old end is not before the new end (the window's
 * edges, read with the answer in one snapshot). The answer is then returned
 * with the new request's own `window`.
 *
 * An answer also records when the catch-up its replica state came from
 * started (`takenAt`): a request that may be answered from a recent state
 * (see `InsightReader.staleFloor`) takes an answer of an earlier replica
 * position as long as that state is no older than its floor, and, if rows
 * entered or left the window since, as long as the answer's own window ended
 * no earlier than the floor (it is then returned with that window).
 *
 * An answer read over the per-day rollups (issue #31) is the raw rows' answer
 * byte for byte, whatever the rollups' mark: the key, the replica position and
 * the edges of the raw table it summarizes hold for it unchanged.
 *
 * @module
 */
import edgesSql from "../../sql/duckdb/insight_edges.sql" with { type: "text" };
import { namedSql, parseNamedSql } from "../store/named_sql.ts";
import type { InsightBody } from "./insights.ts";
import { type InsightWindow, windowObject } from "./window.ts";

const WINDOW_EDGES = namedSql(parseNamedSql(edgesSql), "window_edges");

/**
 * The statement that reads a window's {@link WindowEdges} in `table`, with
 * `$org`, `$start`, `$end` and `$horizon` (insight_edges.sql): the same text
 * on the replica and, for the insights routed there, on SQLite.
 */
export function windowEdgesSql(table: string): string {
  return WINDOW_EDGES.replaceAll("{table}", table);
}

/**
 * The earliest row times at or after a window's start and end, or earlier
 * times with no row between the edge and them; null: no row after the edge.
 */
export interface WindowEdges {
  lo: number | null;
  hi: number | null;
}

interface Entry {
  version: number;
  /** Start of the catch-up the answer's replica state came from (epoch ms); -Infinity: unknown. */
  takenAt: number;
  start: number;
  end: number;
  edges: WindowEdges;
  body: Omit<InsightBody, "window">;
  bytes: number;
}

/** Bytes of answers kept (as JSON): a 90d risk answer is about 30 KB, most are 1–5 KB. */
const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;

/** Insight answers by (organization, insight, window, granularity), least recently used first. */
export class InsightCache {
  readonly #entries = new Map<string, Entry>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes = DEFAULT_MAX_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** Bytes held now (JSON of the answers). */
  get bytes(): number {
    return this.#bytes;
  }

  /** The key of one insight request; the window's times are not part of it. */
  static key(name: string, orgId: string, window: InsightWindow): string {
    return `${name}\u0000${orgId}\u0000${window.window}\u0000${window.granularity}`;
  }

  /**
   * The answer for `window` at replica position `version`, or, when `floor`
   * (epoch ms) is given, at any position whose state was taken at or after
   * it; else null. When rows entered or left the window since, an answer for
   * a window that ended at or after `floor` is returned with that window.
   */
  get(key: string, version: number, window: InsightWindow, floor?: number): InsightBody | null {
    const entry = this.#entries.get(key);
    if (entry === undefined) return null;
    const recent = floor !== undefined && entry.takenAt >= floor;
    if (entry.version !== version && !recent) return null;
    let answered = window;
    if (!holds(entry, window)) {
      if (floor === undefined || entry.end < floor) return null;
      answered = { ...window, start: entry.start, end: entry.end };
    }
    // Most recently used last.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return { window: windowObject(answered), ...entry.body };
  }

  /**
   * Keeps the answer computed for `window` at `version` (a replica state
   * taken at `takenAt`, epoch ms) with its window's edges.
   */
  set(
    key: string,
    version: number,
    window: InsightWindow,
    edges: WindowEdges,
    body: InsightBody,
    takenAt = -Infinity,
  ): void {
    const { window: _, ...rest } = body;
    const bytes = JSON.stringify(rest).length;
    if (bytes > this.#maxBytes / 4) return;
    const old = this.#entries.get(key);
    // An older request finishing late does not replace a newer answer.
    if (
      old !== undefined &&
      (old.version > version || (old.version === version && old.end > window.end))
    ) return;
    if (old !== undefined) this.#delete(key, old);
    this.#entries.set(key, {
      version,
      takenAt,
      start: window.start,
      end: window.end,
      edges,
      body: rest,
      bytes,
    });
    this.#bytes += bytes;
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#delete(oldest, entry);
    }
  }

  #delete(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}

/** Whether the rows in `window` are exactly those of the entry's window. */
function holds(entry: Entry, window: InsightWindow): boolean {
  if (window.start < entry.start || window.end < entry.end) return false;
  const { lo, hi } = entry.edges;
  return (lo === null || window.start <= lo) && (hi === null || window.end <= hi);
}
