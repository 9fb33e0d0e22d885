/**
 * The command line (docs/design.md §3): finds the command in the table
 * (`commands.ts`), answers `--help`/`-h` from its flag table, parses and runs
 * it. Usage, configuration and data-directory errors print one line on stderr
 * and exit 2; with `--json` that line is `{"error":{"code","message"}}`.
 *
 * @module
 */
import { ConfigError } from "../config.ts";
import { UserInputError } from "../errors.ts";
import { DataFileError } from "../store/sqlite/file_checks.ts";
import { commandGroups, COMMANDS } from "./commands.ts";
import { type CommandDef, parseCommandFlags, wantsHelp } from "./flags.ts";
import { commandHelpText, groupHelpText, usageText } from "./help.ts";
import { UsageError } from "./usage.ts";

/** What the command line resolved `args` to. */
type Invocation =
  | { kind: "command"; command: CommandDef; args: string[] }
  | { kind: "help"; text: string }
  | { kind: "usage" };

/** Runs the command line; resolves with the exit code. */
export async function runCli(args: string[]): Promise<number> {
  restrictNewFiles();
  const json = wantsJson(args);
  try {
    const invocation = resolve(args);
    if (invocation.kind === "usage") {
      printTo("stderr", usageText(COMMANDS));
      return 2;
    }
    if (invocation.kind === "help") {
      printTo("stdout", invocation.text);
      return 0;
    }
    const { command, args: rest } = invocation;
    await command.run(parseCommandFlags(command, rest));
    return 0;
  } catch (error) {
    if (error instanceof UserInputError) {
      printError(json, errorCode(error), error.message);
      return 2;
    }
    if (!json) throw error;
    printError(json, "internal", error instanceof Error ? error.message : String(error));
    return 1;
  }
}

/** Finds the command (one or two words), or the help asked for. */
function resolve(args: string[]): Invocation {
  const [first, second] = args;
  if (first === undefined) return { kind: "usage" };
  if (first === "help" || first === "--help" || first === "-h") {
    const topic = args.slice(1).filter((arg) => !arg.startsWith("-"));
    return { kind: "help", text: topic.length ? helpFor(topic) : usageText(COMMANDS) };
  }
  const groups = commandGroups();
  const members = groups.get(first);
  if (members) {
    const command = members.find((member) => member.name === `${first} ${second}`);
    if (command) return commandOrHelp(command, args.slice(2));
    if (wantsHelp(args.slice(1, 2))) return { kind: "help", text: groupHelpText(first, members) };
    if (second === undefined || second.startsWith("-")) {
      throw new UsageError(
        `Missing subcommand: ${first} ${
          members.map((member) => member.name.split(" ")[1]).join("|")
        } (see agent-telemetry ${first} --help)`,
      );
    }
    throw new UsageError(
      `Unknown command: "${first} ${second}" (see agent-telemetry ${first} --help)`,
    );
  }
  const command = COMMANDS.find((candidate) => candidate.name === first);
  if (command) return commandOrHelp(command, args.slice(1));
  throw new UsageError(`Unknown command: "${first}" (see agent-telemetry --help)`);
}

function commandOrHelp(command: CommandDef, args: string[]): Invocation {
  return wantsHelp(args)
    ? { kind: "help", text: commandHelpText(command) }
    : { kind: "command", command, args };
}

/** `help org create`, `help org`, `help serve`. */
function helpFor(topic: string[]): string {
  const name = topic.slice(0, 2).join(" ");
  const command = COMMANDS.find((candidate) => candidate.name === name) ??
    COMMANDS.find((candidate) => candidate.name === topic[0]);
  if (command) return commandHelpText(command);
  const members = commandGroups().get(topic[0]!);
  if (members) return groupHelpText(topic[0]!, members);
  throw new UsageError(`Unknown command: "${name}" (see agent-telemetry --help)`);
}

/** `--json` anywhere before a `--`: errors, too, are then one JSON object. */
function wantsJson(args: string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).includes("--json");
}

/** The `code` of a JSON error: what kind of input to fix. */
function errorCode(error: UserInputError): string {
  if (error instanceof DataFileError) return "data_unusable";
  if (error instanceof UsageError || error instanceof ConfigError) return "invalid_argument";
  return "rejected";
}

/**
 * Data files, backups and directories this process creates are its user's
 * alone (0600, 0700): they hold key hashes and telemetry.
 */
function restrictNewFiles(): void {
  if (Deno.build.os !== "windows") Deno.umask(0o077);
}

function printTo(stream: "stdout" | "stderr", text: string): void {
  // deno-lint-ignore no-console
  (stream === "stdout" ? console.log : console.error)(text);
}

/** One line on stderr: `error: …`, or with `--json` one JSON object. */
function printError(json: boolean, code: string, message: string): void {
  printTo(
    "stderr",
    json ? JSON.stringify({ error: { code, message } }) : `error: ${message}`,
  );
}
