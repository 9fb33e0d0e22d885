/**
 * Structured logs: one JSON object per line on stderr, at or above the
 * configured level. Listener URLs are the exception and go to stdout
 * (docs/design.md §3), through {@link announce}.
 *
 * @module
 */

/** Fields of a log line besides its level and message. */
export type LogFields = Record<string, unknown>;

/** Log levels, quietest last. */
export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, silent: 4 };
let threshold: LogLevel = "info";

/** Sets the lowest level written. */
export function setLogLevel(level: LogLevel): void {
  threshold = level;
}

/** Writes one log line. */
export function log(level: Exclude<LogLevel, "silent">, message: string, fields: LogFields = {}) {
  if (RANK[level] < RANK[threshold]) return;
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
