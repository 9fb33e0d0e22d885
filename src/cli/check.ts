/**
 * `check`: the full verification of a data directory on demand — every page
 * of `keys.db` and `telemetry.db` (`PRAGMA integrity_check`) and the
 * emptied-store rules `serve` applies at start. Read-only; safe while serving.
 *
 * @module
 */
import { checkDataFiles } from "../store/file_checks.ts";
import { dataDirOf, parseFlags, printResult } from "./usage.ts";

/** Runs `check`; a problem is one line and exit code 2 (a `DataFileError`). */
export function runCheck(args: string[]): void {
  const flags = parseFlags(args, { "allow-empty-store": { type: "boolean" } });
  const files = checkDataFiles(dataDirOf(flags), {
    full: true,
    readOnly: true,
    allowEmptyStore: flags["allow-empty-store"] ?? false,
  });
  printResult({ files }, flags.json);
}
