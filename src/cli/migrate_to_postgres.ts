/**
 * `migrate-to-postgres`: copies a data directory's stores into PostgreSQL
 * (docs/design.md §8), resumable and idempotent; works while a server runs on the
 * directory, and a last run after stopping it copies what it wrote meanwhile.
 * Progress goes to stderr, the result to stdout. Ctrl-C stops after the
 * current batch (exit code 2); the next run continues from there.
 *
 * @module
 */
import { UserInputError } from "../errors.ts";
import { log } from "../log.ts";
import { copyDataDirToPostgres, type CopyProgress } from "../store/postgres/copy_from_sqlite.ts";
import {
  type CommandDef,
  DATA_FLAG,
  DATABASE_FLAG,
  databaseOf,
  dataDirOf,
  JSON_FLAG,
  type ParsedFlags,
} from "./flags.ts";
import { printResult, UsageError } from "./usage.ts";

const DEFAULT_BATCH = 1000;
const MAX_BATCH = 50_000;
/** Seconds between progress lines of one table. */
const PROGRESS_EVERY = 2;

/** `migrate-to-postgres`. */
export const migrateToPostgresCommand: CommandDef = {
  name: "migrate-to-postgres",
  summary: "copy a data directory into PostgreSQL; idempotent and resumable",
  details: [
    "Progress goes to stderr, the result to stdout. Ctrl-C stops after the current batch",
    "(exit code 2); the next run continues from there.",
  ],
  flags: [
    { ...DATABASE_FLAG, required: true, description: "PostgreSQL store to copy into" },
    {
      name: "batch",
      value: "N",
      default: String(DEFAULT_BATCH),
      description: `rows copied per batch, 1 to ${MAX_BATCH}`,
    },
    { ...DATA_FLAG, description: "data directory to copy from" },
    JSON_FLAG,
  ],
  run: runMigrateToPostgres,
};

async function runMigrateToPostgres(flags: ParsedFlags): Promise<void> {
  const url = databaseOf(flags);
  if (url === null) {
    throw new UsageError("Missing required flag: --database (or AGENT_TELEMETRY_DATABASE_URL)");
  }
  const batchSize = batchOf(flags.text("batch"), flags.source("batch"));
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  Deno.addSignalListener("SIGINT", onSignal);
  let lastLine = 0;
  try {
    const result = await copyDataDirToPostgres({
      dataDir: dataDirOf(flags),
      url,
      batchSize,
      signal: stop.signal,
      onProgress(progress) {
        if (progress.seconds - lastLine < PROGRESS_EVERY) return;
        lastLine = progress.seconds;
        log("info", "copying", fields(progress));
      },
      onTable(progress) {
        lastLine = 0;
        log("info", "table copied", fields(progress));
      },
    });
    printResult({ ...result }, flags.json);
    if (!result.complete) throw new UserInputError("Stopped before the end: run again to continue");
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
  }
}

function fields(progress: CopyProgress) {
  return {
    table: progress.table,
    rows: progress.rows,
    seconds: Math.round(progress.seconds * 10) / 10,
    rows_per_s: progress.seconds > 0 ? Math.round(progress.rows / progress.seconds) : 0,
  };
}

function batchOf(value: string | undefined, source: string): number {
  if (value === undefined) return DEFAULT_BATCH;
  const batch = value.trim() === "" ? NaN : Number(value);
  if (!Number.isInteger(batch) || batch < 1 || batch > MAX_BATCH) {
    throw new UsageError(
      `Invalid batch size: ${
        JSON.stringify(value)
      } from ${source} (expected a whole number of rows from 1 to ${MAX_BATCH})`,
    );
  }
  return batch;
}
