/**
 * Command-line plumbing shared by the commands: the usage error, the
 * database URL of `--database`, and output as JSON or text.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { announce } from "../log.ts";
import { UserInputError } from "../errors.ts";
import type { ParsedFlags } from "./flags.ts";

/** A bad invocation: printed as one line, exit code 2. */
export class UsageError extends UserInputError {
  override name = "UsageError";
}

/** Flag types as `parseArgs` takes them. */
export type FlagSpec = Record<string, { type: "string" | "boolean" }>;

/**
 * Parses a bare flag spec strictly, with `--data` and `--json`; the commands
 * themselves parse through their tables (`parseCommandFlags`), this serves
 * callers that hold only a spec, such as `serveFlagSpec` in tests.
 */
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

/**
 * The PostgreSQL store, when one is named: `--database`, else
 * `AGENT_TELEMETRY_DATABASE_URL`; null for the embedded files of the data directory.
 */
export function databaseOf(flags: ParsedFlags): string | null {
  const url = flags.text("database") ?? null;
  if (url !== null && !/^postgres(ql)?:\/\/\S+$/.test(url)) {
    const shown = url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*:)[^@/]*@/i, "$1***@");
    throw new UsageError(
      `Invalid database URL: ${JSON.stringify(shown)} from ${
        flags.source("database")
      } (expected postgres://USER@HOST:PORT/DB)`,
    );
  }
  return url;
}

/** The data directory a command works on: `--data`, else its variable, else its default. */
export function dataDirOf(flags: ParsedFlags): string {
  return flags.text("data") ?? "./data";
}

/** A required flag's value (presence is checked when parsing). */
export function required(flags: ParsedFlags, name: string): string {
  const value = flags.text(name);
  if (value === undefined || value === "") throw new UsageError(`Missing required flag: --${name}`);
  return value;
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
