/**
 * Consistent copies of the two SQLite files while the server runs
 * (`VACUUM INTO` reads one snapshot), and restoring them into an empty data
 * directory. The DuckDB replica is derived data and is rebuilt, not copied.
 *
 * @module
 */
import { dataPaths } from "./data_dir.ts";
import { UserInputError } from "../../errors.ts";
import { openDatabase } from "./database.ts";
import { openDataFile } from "./file_checks.ts";

const FILES = ["keys", "telemetry"] as const;

/** Copies `keys.db` and `telemetry.db` into `outDir` (which must not hold them yet). */
export function backupDataDir(dataDir: string, outDir: string): { files: string[]; bytes: number } {
  const from = dataPaths(dataDir);
  const to = dataPaths(outDir);
  for (const name of FILES) {
    if (!exists(from[name])) {
      throw new UserInputError(`Nothing to back up: "${from[name]}" does not exist`);
    }
    if (exists(to[name])) throw new UserInputError(`Backup target already exists: "${to[name]}"`);
  }
  // Both are opened before anything is written: a damaged one is one line, and no target.
  const dbs: ReturnType<typeof openDatabase>[] = [];
  let bytes = 0;
  try {
    for (const name of FILES) {
      dbs.push(openDataFile(from[name], () => openDatabase(from[name], { readOnly: true })));
    }
    Deno.mkdirSync(outDir, { recursive: true });
    for (const [i, name] of FILES.entries()) {
      openDataFile(from[name], () => dbs[i]!.prepare("VACUUM INTO ?").run(to[name]));
      bytes += Deno.statSync(to[name]).size;
    }
  } finally {
    for (const db of dbs) db.close();
  }
  return { files: FILES.map((name) => to[name]), bytes };
}

/** Copies a backup into a data directory that holds no stores yet. */
export function restoreDataDir(fromDir: string, dataDir: string): { files: string[] } {
  const from = dataPaths(fromDir);
  const to = dataPaths(dataDir);
  for (const name of FILES) {
    if (!exists(from[name])) throw new UserInputError(`Not a backup: "${from[name]}" is missing`);
  }
  for (const path of [to.keys, to.telemetry, to.analytics]) {
    if (exists(path)) {
      throw new UserInputError(`Restore needs an empty data directory: "${path}" exists`);
    }
  }
  Deno.mkdirSync(dataDir, { recursive: true });
  for (const name of FILES) Deno.copyFileSync(from[name], to[name]);
  return { files: FILES.map((name) => to[name]) };
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
