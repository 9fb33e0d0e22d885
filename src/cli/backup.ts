/**
 * `backup --out DIR` and `restore --from DIR`.
 *
 * @module
 */
import { backupDataDir, restoreDataDir } from "../store/sqlite/backup.ts";
import { type CommandDef, DATA_FLAG, dataDirOf, JSON_FLAG, required } from "./flags.ts";
import { printResult } from "./usage.ts";

/** `backup`: copies the stores of `--data` into `--out`, consistent while the server runs. */
export const backupCommand: CommandDef = {
  name: "backup",
  summary: "copy keys.db and telemetry.db consistently, also while serving",
  flags: [
    {
      name: "out",
      value: "DIR",
      required: true,
      description: "backup directory (its files must not exist)",
    },
    DATA_FLAG,
    JSON_FLAG,
  ],
  run(flags) {
    printResult(backupDataDir(dataDirOf(flags), required(flags, "out")), flags.json);
  },
};

/** `restore`: copies a backup from `--from` into an empty `--data` directory. */
export const restoreCommand: CommandDef = {
  name: "restore",
  summary: "copy a backup into an empty data directory",
  flags: [
    { name: "from", value: "DIR", required: true, description: "backup directory" },
    { ...DATA_FLAG, description: "data directory to restore into (missing or empty)" },
    JSON_FLAG,
  ],
  run(flags) {
    printResult(restoreDataDir(required(flags, "from"), dataDirOf(flags)), flags.json);
  },
};
