/**
 * Structured logs: one JSON object per line on stderr. Listener URLs are the
 * exception and go to stdout (DESIGN §6 "CLI"), through {@link announce}.
 *
 * @module
 */

/** Fields of a log line besides its level and message. */
export type LogFields = Record<string, unknown>;

/** Writes one log line. */
export function log(level: "info" | "warn" | "error", message: string, fields: LogFields = {}) {
  const line = JSON.stringify({ time: new Date().toISOString(), level, message, ...fields });
  // deno-lint-ignore no-console
  console.error(line);
}

/** Logs an unexpected error with its stack, never request data. */
export function logError(error: unknown): void {
  log("error", "unexpected error", {
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    stack: error instanceof Error ? error.stack : undefined,
  });
}

/** Prints a line for people and scripts on stdout. */
export function announce(line: string): void {
  // deno-lint-ignore no-console
  console.log(line);
}
