/**
 * How much memory the server's caches may take, from the machine's memory:
 * the DuckDB replica's buffer limit and the SQLite page caches of the
 * writer and of each reader thread. The rest of the process — the Deno
 * binary's mapped code (~90 MiB), five V8 isolates (the main one grows to
 * ~120 MiB under load, the writer's to ~45 MiB) and the HTTP and gRPC
 * listeners — was expected to take about as much again, so the caches get
 * half of a budget of a quarter of the machine's memory, at most 512 MiB.
 * Measured (BENCHMARKS.md), the rest takes more: the server peaked at
 * 736 MiB at 1M calls and 792 MiB at 10M (issue #16's target is 512 MiB).
 * At that 10M peak V8's heaps were at most 278 MiB (main 166, writer 71,
 * readers 17 and 15, checkpoint 9: V8's GC trace), the binary 87 MiB, these
 * caches 224 MiB: about 200 MiB remain, DuckDB beyond its buffer limit and
 * malloc (capping glibc's arenas changed nothing).
 *
 * Read by each thread that opens a store (the workers import it too), so it
 * is computed where it is used rather than passed along.
 *
 * @module
 */
import { totalmem } from "node:os";

const MIB = 2 ** 20;

/** The server's share of the machine's memory: a quarter, at most 512 MiB. */
const SERVER_SHARE = 1 / 4;
const SERVER_MAX_MIB = 512;

/** Cache sizes in MiB. */
export interface MemoryBudget {
  /** The server's whole budget (caches, heaps and code). */
  serverMiB: number;
  /** DuckDB's `memory_limit`: a quarter of the budget. */
  duckdbMiB: number;
  /** The SQLite writer's page cache: an eighth (index pages of the tables being appended to). */
  writerCacheMiB: number;
  /** Each SQLite reader thread's page cache: a thirty-second. */
  readerCacheMiB: number;
}

/** The budget for a machine of `totalBytes` of memory. */
export function memoryBudget(totalBytes: number): MemoryBudget {
  const serverMiB = Math.min(SERVER_MAX_MIB, Math.floor((totalBytes / MIB) * SERVER_SHARE));
  return {
    serverMiB,
    duckdbMiB: Math.max(32, Math.floor(serverMiB / 4)),
    writerCacheMiB: Math.max(8, Math.floor(serverMiB / 8)),
    readerCacheMiB: Math.max(4, Math.floor(serverMiB / 32)),
  };
}

/** This machine's budget. */
export const MEMORY_BUDGET: MemoryBudget = memoryBudget(totalmem());
