/**
 * `backup --out DIR` and `restore --from DIR`.
 *
 * @module
 */
import { backupDataDir, restoreDataDir } from "../store/backup.ts";
import { dataDirOf, parseFlags, printResult, required } from "./usage.ts";

/** Copies the stores of `--data` into `--out`, consistent while the server runs. */
export function runBackup(args: string[]): void {
  const flags = parseFlags(args, { out: { type: "string" } });
  printResult(backupDataDir(dataDirOf(flags), required(flags.out, "out")), flags.json);
}

/** Copies a backup from `--from` into an empty `--data` directory. */
export function runRestore(args: string[]): void {
  const flags = parseFlags(args, { from: { type: "string" } });
  printResult(restoreDataDir(required(flags.from, "from"), dataDirOf(flags)), flags.json);
}
