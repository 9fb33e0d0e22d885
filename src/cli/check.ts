/**
 * `check`: the full verification of a data directory on demand — every page
 * of `keys.db` and `telemetry.db` (`PRAGMA integrity_check`) and the
 * emptied-store rules `serve` applies at start. Read-only; safe while serving.
 *
 * @module
 */
import { ALLOW_EMPTY_STORE_FLAG, checkDataFiles } from "../store/sqlite/file_checks.ts";
import { type CommandDef, DATA_FLAG, dataDirOf, JSON_FLAG } from "./flags.ts";
import { requireStore } from "./store_presence.ts";
import { printResult } from "./usage.ts";

/** `check`: a problem is one line and exit code 2 (a `DataFileError`). */
export const checkCommand: CommandDef = {
  name: "check",
  summary: "verify every page of keys.db and telemetry.db and the emptied-store rules",
  flags: [
    {
      name: ALLOW_EMPTY_STORE_FLAG.slice(2),
      description: "accept an empty keys.db or a missing telemetry.db, as serve would with it",
    },
    { ...DATA_FLAG, description: "data directory to verify (refused when it holds no store)" },
    JSON_FLAG,
  ],
  run(flags) {
    const dir = dataDirOf(flags);
    requireStore(dir, flags.source("data"), "any");
    const files = checkDataFiles(dir, {
      full: true,
      readOnly: true,
      allowEmptyStore: flags.on("allow-empty-store"),
    });
    printResult({ files }, flags.json);
  },
};
