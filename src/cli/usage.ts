/**
 * Command-line parsing shared by the commands: flags via `node:util`'s
 * strict `parseArgs`, one-line usage errors, and output as JSON or text.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { announce } from "../log.ts";
import { UserInputError } from "../errors.ts";

/** A bad invocation: printed as one line, exit code 2. */
export class UsageError extends UserInputError {
  override name = "UsageError";
}

/** Flag types as `parseArgs` takes them. */
export type FlagSpec = Record<string, { type: "string" | "boolean" }>;

/** Parses flags strictly: unknown flags and stray arguments are usage errors. */
export function parseFlags<S extends FlagSpec>(args: string[], spec: S) {
  try {
    return parseArgs({
      args,
      options: { ...spec, data: { type: "string" }, json: { type: "boolean" } },
      strict: true,
      allowPositionals: false,
    }).values as { [K in keyof S]?: S[K]["type"] extends "boolean" ? boolean : string } & {
      data?: string;
      json?: boolean;
    };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message.split("\n")[0]! : String(error));
  }
}

/** A required flag's value. */
export function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === "") throw new UsageError(`Missing required flag: --${flag}`);
  return value;
}

/** The data directory: `--data`, else `AGENT_TELEMETRY_DATA`, else `./data`. */
export function dataDirOf(flags: { data?: string }): string {
  return flags.data ?? Deno.env.get("AGENT_TELEMETRY_DATA") ?? "./data";
}

/**
 * The PostgreSQL store, when one is named: `--database`, else
 * `AGENT_TELEMETRY_DATABASE_URL`; null for the embedded files of the data directory.
 */
export function databaseOf(flags: { database?: string }): string | null {
  const url = flags.database ?? Deno.env.get("AGENT_TELEMETRY_DATABASE_URL") ?? null;
  if (url !== null && !/^postgres(ql)?:\/\/\S+$/.test(url)) {
    throw new UsageError(
      `Invalid database URL: ${JSON.stringify(url)} (expected postgres://USER@HOST:PORT/DB)`,
    );
  }
  return url;
}

/** Prints a result: one JSON object with `--json`, else `key: value` lines. */
export function printResult(result: Record<string, unknown>, json: boolean | undefined): void {
  if (json) {
    announce(JSON.stringify(result));
    return;
  }
  for (const [key, value] of Object.entries(result)) {
    announce(`${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
  }
}
