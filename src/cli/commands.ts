/**
 * The command table: every command of the command line, in the order the
 * usage lists them. Dispatch, parsing and help all walk this one list.
 *
 * @module
 */
import { SERVICE_NAME } from "../api/ping.ts";
import { VERSION } from "../version.ts";
import { adminCommandDefs } from "./admin.ts";
import { backupCommand, restoreCommand } from "./backup.ts";
import { checkCommand } from "./check.ts";
import { detectRescanCommand } from "./detect.ts";
import { exportCommand } from "./export.ts";
import { type CommandDef, DATA_FLAG, type FlagDef, JSON_FLAG } from "./flags.ts";
import { migrateToPostgresCommand } from "./migrate_to_postgres.ts";
import { serveCommand, serveFlagDefs } from "./serve.ts";
import { printResult } from "./usage.ts";

/** The demo's own data directory: never the one `serve` uses by default. */
export const DEMO_DATA_DIR = "./data-demo";

const demoData: FlagDef = {
  name: "data",
  value: "DIR",
  default: DEMO_DATA_DIR,
  description: "demo data directory (AGENT_TELEMETRY_DATA is not read, so the demo never " +
    "writes into a server's data)",
};

const demoCommand: CommandDef = {
  name: "demo",
  summary: "create a demo organization, send it synthetic telemetry and serve it",
  details: [
    `Writes into ${DEMO_DATA_DIR} unless --data says otherwise. A rerun on the same directory`,
    'reuses its "Demo" organization and data (--actors and --days then change nothing) and prints',
    "a new API key; remove the directory for a fresh demo. Takes every serve flag.",
  ],
  flags: [
    {
      name: "actors",
      value: "N",
      default: "5",
      description: "synthetic actors on a first run, 1 to 1000",
    },
    { name: "days", value: "D", default: "30", description: "days of history, 1 to 400" },
    demoData,
    ...serveFlagDefs.filter((flag) => flag.name !== "data"),
    JSON_FLAG,
  ],
  // Loaded on demand: the generator is needed by this command only.
  run: async (flags) => (await import("./demo.ts")).runDemo(flags),
};

const versionCommand: CommandDef = {
  name: "version",
  summary: "print the service name and version",
  flags: [
    { ...DATA_FLAG, env: undefined, description: "accepted like every command's, not read" },
    JSON_FLAG,
  ],
  run: (flags) => printResult({ service: SERVICE_NAME, version: VERSION }, flags.json),
};

/** Every command, in the order the usage lists them. */
export const COMMANDS: readonly CommandDef[] = [
  serveCommand,
  demoCommand,
  ...adminCommandDefs,
  detectRescanCommand,
  exportCommand,
  checkCommand,
  backupCommand,
  restoreCommand,
  migrateToPostgresCommand,
  versionCommand,
];

/** Groups of two-word commands (`org`, `detect`) and their members. */
export function commandGroups(): Map<string, CommandDef[]> {
  const groups = new Map<string, CommandDef[]>();
  for (const command of COMMANDS) {
    const [group, action] = command.name.split(" ");
    if (action === undefined) continue;
    groups.set(group!, [...(groups.get(group!) ?? []), command]);
  }
  return groups;
}
