/**
 * Admin commands work on a store that exists: a typo in `--data` must not
 * silently create a new, empty store beside the real one. Only `org create`,
 * the first command of a setup, may start one — in a missing or empty
 * directory.
 *
 * @module
 */
import { DataFileError } from "../store/sqlite/file_checks.ts";
import { databaseOf, dataDirOf, type ParsedFlags } from "./flags.ts";

/** Which file a command needs, and whether it may start a new store. */
export type StoreNeed = "keys" | "any" | "keys or new";

const FILES = { keys: "keys.db", telemetry: "telemetry.db" } as const;
/** Entries an empty directory may hold: a fresh file system's own. */
const IGNORED_ENTRIES = new Set(["lost+found"]);

/**
 * The store a command works on: PostgreSQL when `--database` names one, else
 * the data directory, refused (see {@link requireStore}) unless it holds what
 * `need` says.
 */
export function commandStore(
  flags: ParsedFlags,
  need: StoreNeed,
): { dir: string; database: string | null } {
  const database = databaseOf(flags);
  const dir = dataDirOf(flags);
  if (database === null) requireStore(dir, flags.source("data"), need);
  return { dir, database };
}

/**
 * Fails with one line naming the directory and where it came from (`source`:
 * `--data`, `AGENT_TELEMETRY_DATA` or the default) unless `dir` holds what
 * `need` says. Creates nothing.
 */
export function requireStore(dir: string, source: string, need: StoreNeed): void {
  const shown = `"${dir}" (${source})`;
  const entries = listEntries(dir);
  if (entries === null) {
    if (need === "keys or new") return;
    throw new DataFileError(
      `No store in ${shown}: the directory does not exist; check the path${setupHint(need)}`,
    );
  }
  const wanted = need === "any" ? [FILES.keys, FILES.telemetry] : [FILES.keys];
  const present = wanted.filter((file) => entries.includes(file));
  if (present.length > 0) {
    for (const file of present) requireNotEmpty(`${dir}/${file}`);
    return;
  }
  const others = entries.filter((entry) => !IGNORED_ENTRIES.has(entry));
  if (need === "keys or new" && others.length === 0) return;
  const holds = others.length === 0
    ? "it is empty"
    : `it holds ${others.slice(0, 3).map((entry) => `"${entry}"`).join(", ")}${
      others.length > 3 ? ` and ${others.length - 3} more` : ""
    }`;
  throw new DataFileError(
    `No store in ${shown}: no ${wanted.join(" or ")}, ${holds}; check the path${setupHint(need)}`,
  );
}

function setupHint(need: StoreNeed): string {
  return need === "keys" || need === "keys or new"
    ? ", or set up a new store with org create in an empty directory"
    : "";
}

/** SQLite takes an empty file as a new database: refused like at start-up. */
function requireNotEmpty(path: string): void {
  if (Deno.statSync(path).size > 0) return;
  throw new DataFileError(
    `Empty data file: "${path}" (0 bytes); restore it from a backup (restore --from DIR) or move it away`,
  );
}

function listEntries(dir: string): string[] | null {
  try {
    return [...Deno.readDirSync(dir)].map((entry) => entry.name);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    if (error instanceof Deno.errors.NotADirectory) {
      throw new DataFileError(`Not a directory: "${dir}"; check the path`);
    }
    throw new DataFileError(
      `Cannot read data directory: "${dir}" (${
        error instanceof Error ? error.message : String(error)
      })`,
    );
  }
}
