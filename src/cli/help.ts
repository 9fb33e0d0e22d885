/**
 * Help texts, generated from the command table (`src/cli/commands.ts`): the
 * top-level usage, a group's subcommands and one command's flags with their
 * environment variables and defaults.
 *
 * @module
 */
import { type CommandDef, type FlagDef, HELP_FLAG } from "./flags.ts";

const PROGRAM = "agent-telemetry";
/** Widest left column (flag or command) before descriptions move to the next line. */
const MAX_COLUMN = 46;

/** `org create --name NAME [flags]`: a command with its required flags. */
export function synopsis(command: CommandDef): string {
  const required = command.flags.filter((flag) => flag.required).map(flagWithValue);
  const optional = command.flags.some((flag) => !flag.required);
  return [command.name, ...required, ...(optional ? ["[flags]"] : [])].join(" ");
}

/** The top-level usage: every command with its required flags. */
export function usageText(commands: readonly CommandDef[]): string {
  return [
    `Usage: ${PROGRAM} <command> [flags]`,
    "",
    "Commands:",
    ...table([
      ...commands.map((command): [string, string] => [synopsis(command), command.summary]),
      ["help [COMMAND]", "this text, or a command's help"],
    ]),
    "",
    `Run ${PROGRAM} <command> --help (or -h) for a command's flags, environment variables and defaults.`,
    "Errors print one line on stderr and exit with code 2; with --json that line is",
    `{"error":{"code":"…","message":"…"}}.`,
  ].join("\n");
}

/** A group's help (`org --help`): its subcommands. */
export function groupHelpText(group: string, commands: readonly CommandDef[]): string {
  return [
    `Usage: ${PROGRAM} ${group} <subcommand> [flags]`,
    "",
    "Subcommands:",
    ...table(commands.map((command) => [synopsis(command), command.summary])),
    "",
    `Run ${PROGRAM} ${group} <subcommand> --help for its flags.`,
  ].join("\n");
}

/** One command's help: synopsis, summary, details, and every flag it accepts. */
export function commandHelpText(command: CommandDef): string {
  const flags = table([...command.flags, HELP_FLAG].flatMap(flagRows));
  return [
    `Usage: ${PROGRAM} ${synopsis(command)}`,
    "",
    command.summary.charAt(0).toUpperCase() + command.summary.slice(1) + ".",
    ...(command.details?.length ? ["", ...command.details] : []),
    "",
    "Flags:",
    ...flags,
  ].join("\n");
}

/** A flag's rows: name and description, then its variable and default. */
function flagRows(flag: FlagDef): [string, string][] {
  const name = flag === HELP_FLAG ? "-h, --help" : flagWithValue(flag);
  const notes = [
    ...(flag.env ? [`env ${flag.env}`] : []),
    ...(flag.default !== undefined ? [`default ${flag.default}`] : []),
  ];
  return [
    [name, flag.required ? `${flag.description} (required)` : flag.description],
    ...(notes.length ? [["", notes.join("; ")] as [string, string]] : []),
  ];
}

function flagWithValue(flag: FlagDef): string {
  return flag.value === undefined ? `--${flag.name}` : `--${flag.name} ${flag.value}`;
}

/** Two columns; a left cell wider than the column puts its description on the next line. */
function table(rows: readonly (readonly [string, string])[]): string[] {
  const fitting = rows.map(([left]) => left.length + 4).filter((width) => width <= MAX_COLUMN);
  const column = Math.max(0, ...fitting);
  return rows.flatMap(([left, right]) => {
    const cell = `  ${left}`;
    if (cell.length < column) return [`${cell.padEnd(column)}${right}`];
    return [cell, `${"".padEnd(column)}${right}`];
  });
}
