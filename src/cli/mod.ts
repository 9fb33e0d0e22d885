/**
 * The command line (DESIGN §3): dispatches to `serve`, `demo`, `version` and
 * the admin commands. Usage and configuration errors print one line and exit 2.
 *
 * @module
 */
import { UserInputError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { SERVICE_NAME } from "../api/ping.ts";
import { adminCommandNames, isAdminGroup, runAdminCommand } from "./admin.ts";
import { runBackup, runRestore } from "./backup.ts";
import { runCheck } from "./check.ts";
import { runDetect } from "./detect.ts";
import { runMigrateToPostgres } from "./migrate_to_postgres.ts";
import { runServe } from "./serve.ts";
import { parseFlags, printResult, UsageError } from "./usage.ts";

const USAGE = `Usage: agent-telemetry <command> [flags]

Commands:
  serve [--listen H:P] [--ingest-listen H:P] [--grpc-listen H:P|off] [--tls-cert F --tls-key F]
        [--query-timeout-ms N] [--ingest-max-bytes N] [--keep-secrets]
        [--readonly] [--allow-empty-store] [--metrics-token T]
  demo [--actors N] [--days D] [serve flags]
${adminCommandNames.map((name) => `  ${name}`).join("\n")}
  detect rescan [--keep-secrets]
  check                  verify every page of keys.db and telemetry.db
  backup --out DIR
  restore --from DIR
  migrate-to-postgres --database URL [--batch N]
  version

Every command takes --data DIR (default ./data, env AGENT_TELEMETRY_DATA) and --json.`;

/** Runs the command line; resolves with the exit code. */
export async function runCli(args: string[]): Promise<number> {
  const [command, action, ...rest] = args;
  restrictNewFiles();
  try {
    if (command === undefined || command === "help" || command === "--help") {
      printUsage();
      return command === undefined ? 2 : 0;
    }
    if (command === "serve") {
      await runServe(args.slice(1));
    } else if (command === "demo") {
      const { runDemo } = await import("./demo.ts");
      await runDemo(args.slice(1));
    } else if (command === "detect") {
      await runDetect(action, rest);
    } else if (command === "check") {
      runCheck(args.slice(1));
    } else if (command === "backup") {
      runBackup(args.slice(1));
    } else if (command === "restore") {
      runRestore(args.slice(1));
    } else if (command === "migrate-to-postgres") {
      await runMigrateToPostgres(args.slice(1));
    } else if (command === "version") {
      const flags = parseFlags(args.slice(1), {});
      printResult({ service: SERVICE_NAME, version: VERSION }, flags.json);
    } else if (isAdminGroup(command)) {
      await runAdminCommand(command, action, rest);
    } else {
      throw new UsageError(`Unknown command: "${command}" (see agent-telemetry help)`);
    }
    return 0;
  } catch (error) {
    if (error instanceof UserInputError) {
      printError(error.message);
      return 2;
    }
    throw error;
  }
}

/**
 * Data files, backups and directories this process creates are its user's
 * alone (0600, 0700): they hold key hashes and telemetry.
 */
function restrictNewFiles(): void {
  if (Deno.build.os !== "windows") Deno.umask(0o077);
}

function printUsage(): void {
  // deno-lint-ignore no-console
  console.log(USAGE);
}

function printError(message: string): void {
  // deno-lint-ignore no-console
  console.error(`error: ${message}`);
}
