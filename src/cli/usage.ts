/**
 * Command-line plumbing shared by the commands: the usage error, strict
 * parsing of a bare flag spec, and output as JSON or text.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { announce } from "../log.ts";
import { UserInputError } from "../errors.ts";

/** A bad invocation: printed as one line, exit code 2. */
export class UsageError extends UserInputError {}

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
