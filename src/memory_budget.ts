/**
 * How much memory the server's caches may take, from the machine's memory:
 * the DuckDB replica's buffer limit and the SQLite page caches of the
 * writer and of each reader thread, and the V8 flags every launch of the
 * server passes ({@link SERVER_V8_FLAGS}). The caches get half of a budget
 * of a quarter of the machine's memory, at most 512 MiB; the rest of the
 * process must fit in the other half.
 *
 * Where the rest goes (issue #31, 100k calls, `/proc/<pid>/smaps`, glibc's
 * `malloc_info` and DuckDB's jemalloc statistics read at the peaks): the
 * Deno binary and libduckdb mapped, about 100 MiB; glibc's arenas 110-190
 * MiB (the writer's page cache 63 MiB of it, the main thread's arena 35-60
 * MiB with up to a third of it free); DuckDB's jemalloc 68-115 MiB resident
 * for 38-77 MiB allocated; and the largest share, V8's heaps: 176-199 MiB
 * of 256 KiB heap pages with V8's defaults (main isolate up to 167 MiB
 * committed, writer 60, readers 15-24, checkpoint 7: `--trace-gc`). Those
 * heaps were mostly garbage, not live data: a full collection left the
 * main isolate about 25 MiB and the writer 10, but each isolate's young
 * generation may grow to 35-64 MiB (V8's `new_space` with objects
 * surviving) and V8 let the main isolate's heap reach 67-104 MiB before
 * the next full collection (104 after 25 survived). With V8's defaults the
 * server peaked at 604-651 MiB at 100k calls, 736 MiB at 1M and 792 MiB at
 * 10M.
 *
 * V8's heap limits can only be set when the process starts (Deno's Worker
 * takes none; `node:worker_threads`' `resourceLimits` would cover the
 * workers but not the main isolate), so every launch passes them:
 * `deno.json`'s tasks, `deploy/launcher.sh`, `deno compile`
 * (`scripts/compile.ts`) and the benchmark's server
 * (`tests/server_v8_flags_test.ts` holds them to this list). With them and
 * DuckDB's allocator settings (`DUCKDB_SETTINGS`) the server peaked at 468
 * and 498 MiB at 100k calls, every phase of the benchmark under 512 MiB,
 * where main peaked at 579-623 MiB on the same machine in the runs
 * alternating with them. At 300k calls the peak is 587 MiB, in the 60 s
 * mixed load (ingest 522): there V8's heap pages took 171 MiB, glibc's
 * arenas 197 (the writer's 79) and DuckDB's jemalloc 103 resident for 93
 * allocated.
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

/**
 * V8's heap flags for the server process, every isolate alike: 4 MiB
 * semi-spaces (a young generation of about 8 MiB where V8's default grew
 * to 35-64), a first old generation limit of 32 MiB, and an old generation
 * that grows to twice what a full collection kept alive before the next
 * one (V8 otherwise grows it up to 4×). Smaller settings saved more and
 * cost more: 1 MiB semi-spaces and growth by half took the peak at 100k
 * calls to 439-476 MiB, but the server's CPU per ingested call rose by
 * 26-50% (V8's GC threads 28-37 µs a JSON call instead of 10-11).
 */
export const SERVER_V8_FLAGS: readonly string[] = [
  "--max-semi-space-size=4",
  "--initial-old-space-size=32",
  "--heap-growing-percent=100",
];

/** This machine's budget. */
export const MEMORY_BUDGET: MemoryBudget = memoryBudget(totalmem());
