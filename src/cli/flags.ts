/**
 * Commands as data: each command is one {@link CommandDef} whose flag table
 * is the only source of what it accepts. Parsing, required-flag checks,
 * environment fallbacks and `--help` are all built from that table, so help
 * cannot drift from behaviour.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { UsageError } from "./usage.ts";

/** One flag of a command. */
export interface FlagDef {
  /** Name without dashes: `org`, `retention-days`. */
  name: string;
  /** Placeholder of the value in help (`ORG`, `DIR`); absent for a switch. */
  value?: string;
  /** Environment variable read when the flag is absent. */
  env?: string;
  /** The default as help shows it; for flags read with {@link ParsedFlags.text}, also the value used. */
  default?: string;
  required?: boolean;
  /** May be given several times; the values are joined with commas (`--dimension a --dimension b`). */
  repeatable?: boolean;
  description: string;
}

/** One command of the command line (`serve`, `org create`). */
export interface CommandDef {
  /** One or two words: `serve`, `org create`. */
  name: string;
  /** One line for the command list and the top of its help. */
  summary: string;
  /** Lines after the summary in its help: choices and where output goes. */
  details?: readonly string[];
  flags: readonly FlagDef[];
  run(flags: ParsedFlags): Promise<void> | void;
}

/** What a command's flags resolved to. */
export interface ParsedFlags {
  /** Values given on the command line, by flag name (switches are `true`). */
  readonly given: Readonly<Record<string, string | boolean | undefined>>;
  /** Whether `--json` was given. */
  readonly json: boolean;
  /** A flag's value: given, else its environment variable, else its default. */
  text(name: string): string | undefined;
  /** Whether a switch was given. */
  on(name: string): boolean;
  /** Where a flag's value came from, for error messages: `--data`, `AGENT_TELEMETRY_DATA`, or the default. */
  source(name: string): string;
}

/** `--json`, taken by every command. */
export const JSON_FLAG: FlagDef = {
  name: "json",
  description: "print the result, or an error, as one JSON object",
};

/** `--data DIR` of the commands that work on a data directory. */
export const DATA_FLAG: FlagDef = {
  name: "data",
  value: "DIR",
  env: "AGENT_TELEMETRY_DATA",
  default: "./data",
  description: "data directory (keys.db, telemetry.db)",
};

/** `--database URL` of the commands that can work on a PostgreSQL store instead. */
export const DATABASE_FLAG: FlagDef = {
  name: "database",
  value: "URL",
  env: "AGENT_TELEMETRY_DATABASE_URL",
  description: "work on this PostgreSQL store (postgres://USER@HOST:PORT/DB) instead of --data",
};

/** `-h`/`--help`: listed in every help text; answered before any flag is parsed. */
export const HELP_FLAG: FlagDef = { name: "help", description: "show this help and exit" };

/** Whether `args` ask for help (`--help` or `-h` before a `--`). */
export function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((arg) => arg === "--help" || arg === "-h");
}

/** The options `parseArgs` gets for `command`: exactly its flag table and `--help`. */
export function parseOptionsOf(
  command: Pick<CommandDef, "flags">,
): Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> {
  const options: Record<
    string,
    { type: "string" | "boolean"; short?: string; multiple?: boolean }
  > = {
    help: { type: "boolean", short: "h" },
  };
  for (const flag of command.flags) {
    options[flag.name] = {
      type: flag.value === undefined ? "boolean" : "string",
      ...(flag.repeatable ? { multiple: true } : {}),
    };
  }
  return options;
}

/**
 * Parses `args` strictly by `command`'s table: an unknown flag, a missing
 * value, a stray argument or a missing required flag is a {@link UsageError}.
 */
export function parseCommandFlags(
  command: Pick<CommandDef, "name" | "flags">,
  args: string[],
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): ParsedFlags {
  let given: Record<string, string | boolean | undefined>;
  try {
    const values = parseArgs({
      args,
      options: parseOptionsOf(command),
      strict: true,
      allowPositionals: false,
    }).values;
    given = Object.fromEntries(
      Object.entries(values).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(",") : value,
      ]),
    );
  } catch (error) {
    throw new UsageError(
      `${parseProblem(error, command)} (see agent-telemetry ${command.name} --help)`,
    );
  }
  const byName = new Map(command.flags.map((flag) => [flag.name, flag]));
  const definition = (name: string) => {
    const flag = byName.get(name);
    if (!flag) throw new Error(`Flag not in the table of ${command.name}: --${name}`);
    return flag;
  };
  const parsed: ParsedFlags = {
    given,
    json: given.json === true,
    text(name) {
      const flag = definition(name);
      const value = given[name];
      if (typeof value === "string") return value;
      return (flag.env ? env(flag.env) : undefined) ?? flag.default;
    },
    on(name) {
      definition(name);
      return given[name] === true;
    },
    source(name) {
      const flag = definition(name);
      if (given[name] !== undefined) return `--${name}`;
      if (flag.env && env(flag.env) !== undefined) return flag.env;
      return `default of --${name}`;
    },
  };
  for (const flag of command.flags) {
    if (!flag.required) continue;
    const value = parsed.text(flag.name);
    if (value === undefined || value === "") {
      throw new UsageError(
        `Missing required flag: --${flag.name}${flag.env ? ` (or ${flag.env})` : ""}`,
      );
    }
  }
  return parsed;
}

/** `parseArgs`'s complaint in our words: which flag or argument, and what is wrong with it. */
function parseProblem(error: unknown, command: Pick<CommandDef, "flags">): string {
  const message = error instanceof Error ? error.message.split("\n")[0]! : String(error);
  const code = (error as { code?: unknown }).code;
  const quoted = /'([^']+)'/.exec(message)?.[1];
  if (quoted === undefined) return message;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `Unknown flag: ${quoted}`;
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    return `Unexpected argument: ${JSON.stringify(quoted)}`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const name = quoted.replace(/^-+/, "").split(/[ =]/)[0]!;
    const flag = command.flags.find((candidate) => candidate.name === name);
    if (flag && flag.value === undefined) return `--${name} takes no value`;
    if (flag) return `Missing value for --${name} (expected ${flag.value})`;
  }
  return message;
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
