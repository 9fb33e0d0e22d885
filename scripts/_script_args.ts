/**
 * What every script a user runs does with its arguments: `--help` (or `-h`)
 * prints its usage and exits 0; flags it does not know print one line and the
 * usage and exit 2, never a stack trace.
 *
 * @module
 */
// deno-lint-ignore-file no-console

/** Prints `usage` and exits 0 when `args` ask for help. */
export function handleHelp(usage: string, args: readonly string[] = Deno.args): void {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(usage);
    Deno.exit(0);
  }
}

/** Runs `parse` (e.g. `node:util` `parseArgs`); a refusal is one line, the usage, exit 2. */
export function parseOrExit<T>(usage: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    console.error(usage);
    Deno.exit(2);
  }
}
